// cli_runner.h — helpers for end-to-end tests: run the ddpbench binary or a Python oracle, read
// JSON, find a free port, and check that no process of a run is left behind.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace ddpbench::testing {

ProcessResult ddpbench(std::vector<std::string> args, const std::vector<std::string>& env = {});
ProcessResult python(std::vector<std::string> args);
// Path of a script in reference/.
std::string oracle(const std::string& script);
nlohmann::json read_json(const std::string& path);
// `run --scenario S --gpus K --batch-size B*K --steps N --check-only --quiet --out OUT`: a short
// checked run of B samples per rank, to which a test appends its flags.
std::vector<std::string> short_checked_run(const std::string& scenario, int gpus,
                                           int per_rank_batch, int steps, const std::string& out);
// reference/torch_ddp_oracle.py on the batches a run exported to `dir`, checking its
// state_<mode>.pt to |ddpbench - torch| <= tol + tol |torch|; `oracle_flag` is --single, --zero,
// --fsdp or empty (PyTorch's DDP).
ProcessResult torch_oracle_check(const std::string& dir, const std::string& mode,
                                 const std::string& oracle_flag, const std::string& tol);
// A file's bytes ("" when it cannot be read): what bit-identical states are compared by.
std::string bytes_of(const std::string& path);
// A TCP port that was free a moment ago (bind to port 0, read it, close).
int free_port();
// Listens on a free 127.0.0.1 port and never answers: the kernel completes connections, nobody
// reads or writes (another program on a rendezvous port, as a peer sees it).
class SilentListener {
 public:
  SilentListener();
  ~SilentListener();
  SilentListener(const SilentListener&) = delete;
  SilentListener& operator=(const SilentListener&) = delete;
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = -1;
};
// Whether any process still has `marker` in its command line.
bool process_alive_with(const std::string& marker);
// The shared-memory segments a ddpbench run with process id `pid` named and left in /dev/shm
// (comm/shm_names.h): its own only, so that other tests' runs in parallel do not count.
int shm_segments_of(int pid);
// The names in folder `dir` (hidden ones included), sorted; empty when it does not exist.
std::vector<std::string> folder_names(const std::string& dir);
// What a run whose ranks failed leaves in its --out, and nothing else (Note [The flight recorder]).
inline const std::vector<std::string> kFailureOnlyFolder = {".ddpbench-run", "failure.json"};
// Writes `records` CIFAR-10 binary records (label r % 10, pixel p = (r * salt + p) % 251) to
// dir/data_batch_1.bin, creating dir: a tiny real-format dataset for --data-dir.
void write_cifar_batch(const std::string& dir, int records, int salt);
// The result of `mode` in a report (its first, for a scale report's several).
const nlohmann::json& result_of(const nlohmann::json& report, const std::string& mode);
// The check named `name` of the result of `mode` in a report.
nlohmann::json find_check(const nlohmann::json& report, const std::string& mode,
                          const std::string& name);
// Whether the binary's libtorch has float16 autocast and GradScaler kernels on the CPU (2.x does;
// 1.13 does not, and refuses --amp fp16 there).
bool cpu_fp16_supported();

}  // namespace ddpbench::testing
