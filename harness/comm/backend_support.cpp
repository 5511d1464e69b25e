// backend_support.cpp — see backend_support.h.
#include "comm/backend_support.h"

#include <fmt/format.h>

#include "errors.h"

namespace ddpbench::comm {

bool is_known_backend(const std::string& backend) {
  return backend == "gloo" || backend == "mpi" || backend == "nccl";
}

void require_usable_backend(const std::string& backend, const BackendSituation& situation) {
  if (!is_known_backend(backend)) {
    throw InputError(
        fmt::format("unknown --backend '{}': known backends are {}", backend, kBackendNames));
  }
  if (backend == "mpi" && !situation.under_mpirun) {
    throw InputError(
        "--backend mpi needs ranks started by mpirun (e.g. mpirun -np 4 ddpbench run --backend "
        "mpi ...); use --backend gloo to let ddpbench spawn the workers itself");
  }
  if (backend == "nccl" && situation.cuda_devices == 0) {
    throw InputError(
        "--backend nccl needs a CUDA device and a build with CUDA + NCCL, and this process has "
        "none; use --backend gloo");
  }
}

bool supports_sum(const std::string& backend, at::ScalarType dtype) {
  switch (dtype) {
    case at::kFloat:
    case at::kDouble:
    case at::kHalf:
    case at::kLong:
      return is_known_backend(backend);
    case at::kBFloat16:
      return backend == "mpi" || backend == "nccl";
    default:
      return false;
  }
}

}  // namespace ddpbench::comm
