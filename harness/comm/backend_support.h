// backend_support.h — a collective backend as a value, and the one table of what each can do:
// its name, the devices whose memory it works on, how its ranks meet, whether two ranks may share
// a device, which dtypes it can sum. Every check and every choice derives from the table — the
// CLI's --backend choices and help, the launching parent's refusal before it spawns anything
// (exit 2, nothing started), a rank's before it creates its communicator, the device choice, and
// which cases the communicator contract suite runs — so a new backend is one row here and its
// communicator, with no edit elsewhere.
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ddpbench::comm {

enum class Backend { kGloo, kShm, kMpi, kNccl };

struct BackendTraits {
  Backend backend;
  const char* name;             // what --backend takes and reports say
  const char* help;             // one phrase for --help: when to use it
  bool host_memory;             // sums tensors in host memory (device tensors are staged)
  bool device_memory;           // sums tensors in CUDA device memory
  bool needs_mpi_launcher;      // ranks meet through mpirun/PMI, not a store; ddpbench cannot
                                // spawn them itself
  bool one_rank_per_device;     // refuses two ranks on one GPU (NCCL: "Duplicate GPU detected")
  bool listens_on_master_addr;  // its transport binds --master-addr on this machine
  std::vector<at::ScalarType> sum_dtypes;  // dtypes its allreduce can sum
  // Has a reduce-scatter of its own; false: Communicator::reduce_scatter_sum is an allreduce of
  // the whole input of which each rank keeps its block (moves 2(n-1)/n of the bytes where a
  // reduce-scatter moves (n-1)/n), and `ddpbench comm` says so.
  bool native_reduce_scatter;
  const char* reduce_scatter_note;  // why it is emulated ("" when native)
};

// Every backend, in the order help texts list them; the first is the default.
const std::vector<BackendTraits>& backend_table();
const BackendTraits& traits(Backend backend);
inline const char* backend_name(Backend backend) { return traits(backend).name; }
inline Backend default_backend() { return backend_table().front().backend; }
std::optional<Backend> parse_backend(std::string_view name);
// "gloo, shm, mpi, nccl".
std::string backend_names();
// "gloo (...), mpi (...), nccl (...)": the --backend help text.
std::string backend_help();

// What decides whether a backend can run here.
struct BackendSituation {
  int cuda_devices = 0;       // usable CUDA devices (0 without a GPU or a CUDA build)
  bool under_mpirun = false;  // this process was started by an MPI launcher
};

// Throws InputError naming the problem and the fix: a backend that needs mpirun outside it, one
// that needs a CUDA device without one.
void require_usable_backend(Backend backend, const BackendSituation& situation);
// Parses a --backend value ("" is the default backend); throws InputError naming the known
// backends.
Backend require_known_backend(const std::string& name);

// Whether `backend` can allreduce-sum tensors of `dtype`. gloo has no bfloat16 sum (libtorch
// 1.13's ProcessGroupGloo rejects it), so a bf16 compression hook needs mpi or nccl.
bool supports_sum(Backend backend, at::ScalarType dtype);

}  // namespace ddpbench::comm
