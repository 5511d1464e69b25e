// rank_zygote.cpp — see rank_zygote.h. Requests travel on a socket pair as length-prefixed
// strings; the answer is the rank's pid.
#include "launch/rank_zygote.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "errors.h"
#include "launch/forked_process.h"
#include "quoted_input.h"

namespace ddpbench::launch {
namespace {

// The request as the zygote reads it: log path first, then argv, then the environment.
bool read_request(int fd, RankSpawn& request) {
  std::vector<std::string> log;
  if (!get_strings(fd, log) || log.size() != 1) return false;
  request.log_path = log[0];
  return get_strings(fd, request.argv) && get_strings(fd, request.env);
}

// In the rank, forked by the middle process: waits to be the launcher's child, then becomes what
// worker_group.h's exec'd rank is, and runs the entry point. Never returns.
[[noreturn]] void become_rank(const RankSpawn& r, RankEntry entry, pid_t launcher, pid_t middle,
                              const ArgvArea& area) {
  prctl(PR_SET_NAME, r.argv.empty() ? "ddpbench-rank" : r.argv[0].substr(0, 15).c_str());
  // The middle process exits at once; the launcher, a subreaper, is then this process's parent.
  // The death signal is set only after: set before, the middle's exit would deliver it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (getppid() == middle && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (getppid() != launcher) _exit(1);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher) _exit(1);
  signal(SIGINT, SIG_IGN);  // the parent decides; Ctrl-C reaches the parent and it stops us
  const int fd = ::open(r.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd >= 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
  }
  clearenv();
  for (const std::string& e : r.env) putenv(strdup(e.c_str()));
  set_command_line(area, r.argv);
  std::vector<std::string> argv = r.argv;
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  // exit, not _exit: the rank ends as an exec'd one would (stdio flushed, destructors run).
  std::exit(entry(static_cast<int>(argv.size()), args.data()));
}

// The zygote's loop: one rank per request until the launcher closes the socket.
[[noreturn]] void serve(int socket, RankEntry entry, pid_t launcher, const ArgvArea& area) {
  prctl(PR_SET_NAME, "ddpbench-zygote");
  for (;;) {
    RankSpawn request;
    if (!read_request(socket, request)) _exit(0);
    int ready[2];
    pid_t rank = -1;
    if (pipe2(ready, O_CLOEXEC) == 0) {
      const pid_t middle = fork();
      if (middle == 0) {
        close(ready[0]);
        // Taken before the fork: the child's getppid() is already the launcher's pid when this
        // process exits before the child first runs.
        const pid_t self = getpid();
        const pid_t child = fork();
        if (child == 0) {
          close(ready[1]);
          close(socket);
          become_rank(request, entry, launcher, self, area);
        }
        write_all(ready[1], &child, sizeof child);
        _exit(0);
      }
      close(ready[1]);
      if (middle < 0 || !read_all(ready[0], &rank, sizeof rank)) rank = -1;
      close(ready[0]);
      // Answered only once the middle process is reaped, so the rank is already the launcher's.
      if (middle > 0) {
        while (waitpid(middle, nullptr, 0) < 0 && errno == EINTR) {
        }
      }
    }
    if (!write_all(socket, &rank, sizeof rank)) _exit(0);
  }
}

}  // namespace

RankStart rank_start_from_env() {
  const char* value = std::getenv(kRankStartEnv);
  const std::string mode = value == nullptr ? "" : value;
  if (mode.empty() || mode == "fork") return RankStart::kFork;
  if (mode == "exec") return RankStart::kExec;
  throw InputError(fmt::format(
      "{}={} is not a way to start ranks: use fork (the default: forked by a zygote) or exec, or "
      "unset it",
      kRankStartEnv, quoted_input(mode)));
}

std::unique_ptr<RankZygote> RankZygote::start(RankEntry entry, int argc, char** process_argv) {
  if (rank_start_from_env() == RankStart::kExec) return nullptr;
  if (thread_count() != 1) return nullptr;  // fork would copy a process it cannot continue
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return nullptr;
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) return nullptr;
  std::fflush(nullptr);  // nothing buffered here may be written again by a rank
  const pid_t launcher = getpid();
  const ArgvArea area = argv_area(argc, process_argv);
  const pid_t pid = fork();
  if (pid < 0) {
    close(sockets[0]);
    close(sockets[1]);
    return nullptr;
  }
  if (pid == 0) {
    close(sockets[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher) _exit(1);
    signal(SIGINT, SIG_IGN);
    serve(sockets[1], entry, launcher, area);
  }
  close(sockets[1]);
  return std::unique_ptr<RankZygote>(new RankZygote(pid, sockets[0]));
}

void RankZygote::track() {
  // An action, not a child: the clean-up's "stopped N child process(es)" counts the ranks. It runs
  // after they are reaped; a killed zygote is reaped at once.
  const pid_t pid = pid_;
  const auto lock = SignalCleanup::process().hold();
  tracked_ = TrackedResource(SignalCleanup::process().track_action([pid] {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }));
}

pid_t RankZygote::spawn(const RankSpawn& request) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (socket_ < 0) return -1;
  std::string wire;
  put_strings(wire, {request.log_path});
  put_strings(wire, request.argv);
  put_strings(wire, request.env);
  pid_t rank = -1;
  if (write_all(socket_, wire.data(), wire.size()) && read_all(socket_, &rank, sizeof rank) &&
      rank > 0) {
    return rank;
  }
  stop();
  return -1;
}

void RankZygote::stop() {
  if (socket_ >= 0) close(socket_);
  socket_ = -1;
  if (pid_ <= 0) return;
  // It exits when it reads the end of its socket; a zygote that does not is killed.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (waitpid(pid_, nullptr, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  pid_ = -1;
  tracked_.reset();
}

RankZygote::~RankZygote() {
  const std::lock_guard<std::mutex> lock(mutex_);
  stop();
}

}  // namespace ddpbench::launch
