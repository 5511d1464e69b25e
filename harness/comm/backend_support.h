// backend_support.h — what each collective backend can do, written once: which backends exist,
// whether one can run in this process's situation, and which dtypes it can sum. The launching
// parent asks before it spawns anything (a refused backend is exit 2 with nothing started), a
// rank asks again before it creates its communicator, and the communicator contract suite asks
// which cases apply.
#pragma once

#include <c10/core/ScalarType.h>

#include <string>

namespace ddpbench::comm {

// The backend names --backend accepts, in the order help texts list them.
inline constexpr const char* kBackendNames = "gloo, mpi, nccl";
bool is_known_backend(const std::string& backend);

// What decides whether a backend can run here.
struct BackendSituation {
  int cuda_devices = 0;       // usable CUDA devices (0 without a GPU or a CUDA build)
  bool under_mpirun = false;  // this process was started by an MPI launcher
};

// Throws InputError naming the problem and the fix: an unknown backend, nccl without a CUDA
// device, mpi outside mpirun.
void require_usable_backend(const std::string& backend, const BackendSituation& situation);

// Whether `backend` can allreduce-sum tensors of `dtype`. gloo has no bfloat16 sum (libtorch
// 1.13's ProcessGroupGloo rejects it), so a bf16 compression hook needs mpi or nccl.
bool supports_sum(const std::string& backend, at::ScalarType dtype);

}  // namespace ddpbench::comm
