// nccl_communicator_none.cpp — nccl_communicator.h for builds without CUDA/NCCL: the backend
// exists in the CLI everywhere, and asking for it says how to get it.
#include "comm/nccl_communicator.h"
#include "errors.h"

namespace ddpbench::comm {

std::unique_ptr<Communicator> make_nccl_communicator(const std::shared_ptr<Store>& /*store*/,
                                                     int /*rank*/, int /*world_size*/,
                                                     int /*cuda_device*/) {
  throw InputError(
      "--backend nccl: this ddpbench was built without CUDA/NCCL; rebuild on a machine with the "
      "CUDA toolkit and NCCL, or use --backend gloo");
}

}  // namespace ddpbench::comm
