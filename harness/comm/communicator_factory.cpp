// communicator_factory.cpp — see communicator_factory.h.
#include "comm/communicator_factory.h"

#include "comm/backend_support.h"
#include "comm/gloo_communicator.h"
#include "comm/host_staging.h"
#include "comm/mpi_communicator.h"
#include "comm/nccl_communicator.h"

namespace ddpbench::comm {

std::unique_ptr<Communicator> make_communicator(const CommunicatorRequest& r) {
  // nccl checks for its device itself (it owns the CUDA calls); the rest is decided here.
  if (r.backend != "nccl") require_usable_backend(r.backend, {0, mpi_launched()});
  if (r.backend == "gloo") {
    return make_gloo_communicator(r.store, {r.rank, r.world_size, r.interface_address, r.timeout});
  }
  if (r.backend == "mpi") return with_host_staging(make_mpi_communicator());
  return make_nccl_communicator(r.store, r.rank, r.world_size, r.cuda_device);
}

}  // namespace ddpbench::comm
