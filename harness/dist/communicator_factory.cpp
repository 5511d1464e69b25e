// communicator_factory.cpp — see communicator_factory.h.
#include "dist/communicator_factory.h"

#include <fmt/format.h>

#include "dist/gloo_communicator.h"
#include "dist/mpi_communicator.h"
#include "dist/nccl_communicator.h"
#include "errors.h"

namespace ddpbench::dist {

std::unique_ptr<Communicator> make_communicator(const CommunicatorRequest& r) {
  if (r.backend == "gloo") {
    return make_gloo_communicator(r.store, {r.rank, r.world_size, r.interface_address, r.timeout});
  }
  if (r.backend == "mpi") {
    if (!mpi_launched()) {
      throw InputError(
          "--backend mpi needs ranks started by mpirun (mpirun -np K ddpbench run --backend mpi "
          "...); use --backend gloo to let ddpbench spawn the workers itself");
    }
    return make_mpi_communicator();
  }
  if (r.backend == "nccl") return make_nccl_communicator(r.store, r.rank, r.world_size);
  throw InputError(
      fmt::format("unknown --backend '{}': known backends are gloo, mpi, nccl", r.backend));
}

}  // namespace ddpbench::dist
