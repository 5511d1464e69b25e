// worker_group.cpp — see worker_group.h.
#include "launch/worker_group.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "comm/flight_recorder.h"
#include "comm/shm_names.h"
#include "comm/store.h"
#include "errors.h"
#include "launch/child_process.h"
#include "launch/environment.h"
#include "launch/failure_blame.h"
#include "launch/flight_analysis.h"
#include "launch/rank_zygote.h"
#include "launch/signal_cleanup.h"
#include "launch/stale_reclaim.h"

namespace ddpbench::launch {
namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Worker {
  int rank = 0;
  pid_t pid = -1;
  bool exited = false;
  int status = 0;
  int seen_order = -1;             // when the parent reaped it (failure_blame.h)
  bool ended_before_stop = false;  // it exited on its own, before the parent stopped the group
  std::string log_path;
  std::string flight_path;  // its flight recorder (Note [The flight recorder])
  std::string last_progress = "starting";
  Clock::time_point last_change;
};

std::string tail_of(const std::string& path, int lines) {
  std::ifstream in(path);
  std::vector<std::string> all;
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string out;
  for (size_t i = all.size() > static_cast<size_t>(lines) ? all.size() - lines : 0; i < all.size();
       ++i) {
    out += (out.empty() ? "" : " | ") + all[i];
  }
  return out.empty() ? "(no output)" : out;
}

// Starts rank `rank`: forked by the zygote where there is one (rank_zygote.h), else fork and exec.
pid_t spawn(const WorkerGroupOptions& o, int rank, const std::string& store_file,
            const std::string& log_path, const std::string& flight_path,
            const std::string& result_path, const std::string& self,
            const std::string& shm_prefix) {
  std::vector<std::string> env = {
      fmt::format("{}={}", kFlightFileEnv, flight_path),
      fmt::format("{}={}", kShmPrefixEnv, shm_prefix),
      fmt::format("{}={}", kResultFileEnv, result_path),
      fmt::format("RANK={}", rank),
      fmt::format("LOCAL_RANK={}", rank),
      fmt::format("WORLD_SIZE={}", o.world_size),
      fmt::format("MASTER_ADDR={}", o.master_addr),
      fmt::format("{}={}", kStoreFileEnv, store_file),
      fmt::format("{}=1", kSpawnedEnv),
  };
  env.insert(env.end(), o.extra_env.begin(), o.extra_env.end());
  std::string name = fmt::format("ddpbench-rank{}", rank);
  if (o.zygote != nullptr) {
    RankSpawn request{{name}, environment_with(env), log_path};
    request.argv.insert(request.argv.end(), o.argv.begin() + 1, o.argv.end());
    const pid_t pid = o.zygote->spawn(request);
    if (pid > 0) return pid;  // otherwise the zygote is gone: exec, as without one
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(fmt::format("fork failed: {}", std::strerror(errno)));
  if (pid > 0) return pid;
  // Child: die with the parent, log to a file, become the worker.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  SignalCleanup::reset_in_child();
  signal(SIGINT, SIG_IGN);  // the parent decides; Ctrl-C reaches the parent and it stops us
  const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd >= 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  for (const auto& e : env) putenv(strdup(e.c_str()));
  // Named ddpbench-rankR in ps (argv[0]) and run from the real binary, so that its process name
  // is ddpbench rather than /proc/self/exe's "exe".
  std::vector<char*> args;
  args.push_back(name.data());
  for (size_t i = 1; i < o.argv.size(); ++i) args.push_back(const_cast<char*>(o.argv[i].c_str()));
  args.push_back(nullptr);
  execv(self.c_str(), args.data());
  std::fprintf(stderr, "exec of worker failed: %s\n", std::strerror(errno));
  _exit(127);
}

void stop_all(std::vector<Worker>& workers) {
  for (auto& w : workers) {
    if (!w.exited) kill(w.pid, SIGTERM);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(3);
  for (auto& w : workers) {
    while (!w.exited) {
      if (waitpid(w.pid, &w.status, WNOHANG) == w.pid) {
        w.exited = true;
      } else if (Clock::now() > deadline) {
        kill(w.pid, SIGKILL);
        waitpid(w.pid, &w.status, 0);
        w.exited = true;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  }
}

std::string describe_exit(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  }
  return fmt::format("exited with code {}", WEXITSTATUS(status));
}

// Progress values are "step:phase:phase name"; this shows them as "step S (phase name)".
std::string describe_progress(const std::string& p) {
  const size_t a = p.find(':');
  const size_t b = a == std::string::npos ? a : p.find(':', a + 1);
  if (b == std::string::npos) return p;
  return p.substr(b + 1);  // the rank's own words, e.g. "check phase step 3 of 200, backward"
}

// Orders progress values by (step, phase) numerically; "starting" sorts first.
std::pair<long, long> progress_rank(const std::string& p) {
  const size_t colon = p.find(':');
  if (colon == std::string::npos) return {-1, -1};
  return {std::strtol(p.c_str(), nullptr, 10), std::strtol(p.c_str() + colon + 1, nullptr, 10)};
}

// Reaps `w` if it has exited, numbering the exits in the order seen.
bool reap(Worker& w, int& exits_seen) {
  if (w.exited || waitpid(w.pid, &w.status, WNOHANG) != w.pid) return false;
  w.exited = true;
  w.seen_order = exits_seen++;
  return true;
}

// Peers of a dead rank fail their next collective within moments: give them a moment to exit,
// then blame the rank failure_blame.h picks.
std::string blame_failure(std::vector<Worker>& workers, int& exits_seen) {
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  std::vector<RankExit> exits;
  for (auto& w : workers) {
    reap(w, exits_seen);
    if (w.exited) exits.push_back(RankExit{w.rank, w.status, w.seen_order});
  }
  const Worker& culprit = workers[static_cast<size_t>(choose_culprit(exits)->rank)];
  return fmt::format("rank {} {} at {}; its stderr ends: {}", culprit.rank,
                     describe_exit(culprit.status), describe_progress(culprit.last_progress),
                     tail_of(culprit.log_path, 4));
}

// Reads `w`'s latest progress from the store; rank 0's finished steps go to on_rank0_steps.
void note_progress(Worker& w, comm::Store& store, const WorkerGroupOptions& o) {
  const std::string key = progress_key(w.rank);
  if (!store.check(key)) return;
  const std::string p = store.get(key);
  if (p == w.last_progress) return;
  w.last_progress = p;
  w.last_change = Clock::now();
  if (w.rank == 0 && o.on_rank0_steps) {
    // A step is done when rank 0 reports the next one starting (or its kDone phase).
    const auto [step, phase] = progress_rank(p);
    o.on_rank0_steps(phase >= 6 ? step + 1 : step);
  }
}

// A hang: someone has been silent longer than `timeout`. Blames the rank(s) furthest behind —
// the others are normally blocked in a collective waiting for them. "" while none is stalled.
std::string stall_failure(const std::vector<Worker>& workers, Clock::duration timeout) {
  bool stalled = false;
  for (const auto& w : workers) {
    if (!w.exited && Clock::now() - w.last_change > timeout) stalled = true;
  }
  if (!stalled) return "";
  std::pair<long, long> behind{LONG_MAX, LONG_MAX};
  for (const auto& w : workers) {
    if (!w.exited) behind = std::min(behind, progress_rank(w.last_progress));
  }
  std::vector<std::string> culprits;
  for (const auto& w : workers) {
    if (!w.exited && progress_rank(w.last_progress) == behind) {
      culprits.push_back(
          fmt::format("rank {} (last seen at {})", w.rank, describe_progress(w.last_progress)));
    }
  }
  return fmt::format("no progress for {} s (--timeout): {} stopped responding",
                     std::chrono::duration_cast<std::chrono::seconds>(timeout).count(),
                     fmt::join(culprits, ", "));
}

// Every rank's flight recorder, read now that every rank is stopped.
std::vector<RankFlight> read_flights(const std::vector<Worker>& workers) {
  std::vector<RankFlight> flights;
  for (const Worker& w : workers) {
    flights.push_back(RankFlight{w.rank, comm::read_flight_file(w.flight_path),
                                 w.ended_before_stop ? describe_exit(w.status) : ""});
  }
  return flights;
}

// `failure` with what the ranks' flight recorders say, and failure.json's bytes.
GroupFailure group_failure(const std::vector<RankFlight>& flights, const FlightFinding& finding,
                           const std::string& failure, int64_t stopped_at_ns) {
  const std::string message =
      finding.verdict == FlightVerdict::kNothingRecorded
          ? failure
          : fmt::format("{}; flight recorder: {}", failure, finding.summary);
  const std::string json = fmt::format(
      "{{\"failed\": true, \"exit_code\": {}, \"failure\": {},\n\"collectives\": {}}}\n",
      kExitWorkerFailed, nlohmann::json(message).dump(),
      flight_json(flights, finding, stopped_at_ns));
  return GroupFailure(message, json);
}

// The bytes rank 0 wrote, checked against the size it announced through the store.
std::string read_result(const std::string& path, const std::string& announced) {
  std::ifstream f(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (!f.good() && !f.eof()) throw WorkerFailure("cannot read rank 0's result file " + path);
  if (std::to_string(bytes.size()) != announced) {
    throw WorkerFailure(
        fmt::format("rank 0's result file has {} bytes, it announced {}", bytes.size(), announced));
  }
  return bytes;
}

// Spawns every rank under the cleanup's lock, so that a signal's cleanup never misses a child
// that exists (signal_cleanup.h).
void start_group_workers(const WorkerGroupOptions& o, const std::string& tmp,
                         const std::string& store_file, const std::string& self,
                         const std::string& shm_prefix, SignalCleanup& cleanup,
                         std::vector<TrackedResource>& tracked, std::vector<Worker>& workers) {
  for (int r = 0; r < o.world_size; ++r) {
    Worker& w = workers[static_cast<size_t>(r)];
    w.rank = r;
    w.log_path = fmt::format("{}/rank{}.log", tmp, r);
    w.flight_path = fmt::format("{}/flight{}.bin", tmp, r);
    w.last_change = Clock::now();
    const auto lock = cleanup.hold();
    w.pid =
        spawn(o, r, store_file, w.log_path, w.flight_path, tmp + "/result.bin", self, shm_prefix);
    tracked.emplace_back(cleanup.track_child(w.pid));
  }
}

// Polls the ranks until every one has exited or one failed or stalled: the failure, or "" when
// every rank exited cleanly.
std::string watch_group_workers(std::vector<Worker>& workers, comm::Store& store,
                                const WorkerGroupOptions& o) {
  std::string failure;
  size_t done = 0;
  int exits_seen = 0;
  while (done < workers.size() && failure.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (auto& w : workers) {
      if (w.exited) continue;
      if (reap(w, exits_seen)) {
        ++done;
        if (failed_exit(w.status)) {
          // Every rank's latest word, not the last poll's: a rank can pass several phases
          // between two polls, and the failure names the phase it failed in (the one its flight
          // recorder's collectives were issued in).
          for (Worker& x : workers) note_progress(x, store, o);
          failure = blame_failure(workers, exits_seen);
          break;
        }
        continue;
      }
      note_progress(w, store, o);
    }
    if (failure.empty()) failure = stall_failure(workers, o.progress_timeout);
  }
  return failure;
}

}  // namespace

std::string progress_key(int rank) { return fmt::format("ddpbench/progress/{}", rank); }

std::string run_worker_group(const WorkerGroupOptions& o) {
  SignalCleanup& cleanup = SignalCleanup::process();
  // What an earlier run killed outright left (Note [Reclaiming what a killed run left]).
  reclaim_stale_leftovers();
  std::vector<TrackedResource> tracked;  // what a signal's cleanup stops or removes
  std::optional<OwnedTempDir> owned;
  // The workers' shared-memory segments (--backend shm) are named from this prefix, so this
  // process can unlink every one of them whatever ends the run: a rank killed or stopped during
  // set-up never unlinks its own.
  const std::string shm_prefix = comm::new_shm_run_prefix(getpid());
  const auto remove_segments = [shm_prefix] { comm::remove_shm_segments(shm_prefix); };
  {
    const auto lock = cleanup.hold();
    owned.emplace("workers");
    tracked.emplace_back(cleanup.track_path(owned->path()));
    tracked.emplace_back(cleanup.track_action(remove_segments));
  }
  const std::string tmp = owned->path();
  const std::string self = self_executable();
  const std::string store_file = tmp + "/store";
  auto store = comm::Store::open_file(store_file, o.progress_timeout);

  std::vector<Worker> workers(static_cast<size_t>(o.world_size));
  std::string failure;
  try {
    start_group_workers(o, tmp, store_file, self, shm_prefix, cleanup, tracked, workers);
    failure = watch_group_workers(workers, *store, o);
  } catch (...) {
    stop_all(workers);
    remove_segments();
    fs::remove_all(tmp);
    throw;
  }
  const int64_t stopped_at_ns = comm::monotonic_ns();
  for (Worker& w : workers) w.ended_before_stop = w.exited;
  stop_all(workers);
  remove_segments();
  std::optional<GroupFailure> failed;
  try {
    const std::vector<RankFlight> flights = read_flights(workers);
    const FlightFinding finding = analyse_flights(flights, stopped_at_ns, o.unrecorded_collectives);
    if (!failure.empty()) {
      failed.emplace(group_failure(flights, finding, failure, stopped_at_ns));
    } else if (finding.verdict == FlightVerdict::kDisagree) {
      // Ranks that finished can still have issued different collectives: a backend may reduce
      // mismatched buffers without noticing (shm does), and the numbers are then wrong.
      failed.emplace(group_failure(
          flights, finding, "every rank finished, but not the same collectives", stopped_at_ns));
    }
  } catch (...) {
    fs::remove_all(tmp);
    throw;
  }
  if (failed) {
    fs::remove_all(tmp);
    throw *failed;
  }
  std::string result;
  bool sent = false;
  try {
    sent = store->check(kResultKey);
    if (sent) result = read_result(tmp + "/result.bin", store->get(kResultKey));
  } catch (...) {
    fs::remove_all(tmp);  // a short result file must not leave the folder behind
    throw;
  }
  fs::remove_all(tmp);
  if (!sent) throw WorkerFailure("rank 0 exited without sending its results");
  return result;
}

void send_result(comm::Store& store, const std::string& bytes) {
  const char* path = std::getenv(kResultFileEnv);
  if (path == nullptr) throw std::runtime_error(std::string(kResultFileEnv) + " is not set");
  const std::string partial = std::string(path) + ".partial";
  {
    std::ofstream f(partial, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) throw std::runtime_error(fmt::format("cannot write the result file {}", partial));
  }
  fs::rename(partial, path);
  store.set(kResultKey, std::to_string(bytes.size()));
}

}  // namespace ddpbench::launch
