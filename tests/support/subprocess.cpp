// subprocess.cpp — see subprocess.h. fork/exec with two pipes drained by poll(), so a chatty
// child can never deadlock on a full pipe.
#include "support/subprocess.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace ddpbench::testing {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::vector<std::string>& extra_env, int limit_s) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    close(out_pipe[0]);
    close(err_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[1]);
    for (const auto& e : extra_env) putenv(strdup(e.c_str()));
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    std::fprintf(stderr, "exec %s failed: %s\n", args[0], std::strerror(errno));
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  return wait_for({pid, out_pipe[0], err_pipe[0], -1}, limit_s);
}

namespace {

// Whether the child has ended, and its wait status: by waitpid for this process's own child, or
// from the fork server's connection (which closing without a status means the server is gone:
// then the child's end is seen by its pid vanishing, with no status to tell).
class ChildEnd {
 public:
  explicit ChildEnd(const StartedChild& c) : pid_(c.pid), socket_(c.status_socket) {}
  ~ChildEnd() {
    if (socket_ >= 0) close(socket_);
  }
  bool poll_ended() {
    if (ended_) return true;
    if (socket_ < 0 && !lost_) {
      ended_ = waitpid(pid_, &status_, WNOHANG) == pid_;
      return ended_;
    }
    pollfd p{socket_, POLLIN, 0};
    if (socket_ >= 0 && poll(&p, 1, 0) > 0) {
      int32_t status = 0;
      ended_ = read(socket_, &status, sizeof status) == sizeof status;
      status_ = status;
      lost_ = !ended_;
      close(socket_);
      socket_ = -1;
    }
    if (lost_) ended_ = kill(pid_, 0) != 0 && errno == ESRCH;
    return ended_;
  }
  void wait() {
    if (socket_ < 0 && !lost_ && !ended_) {  // this process's own child: block as before
      ended_ = waitpid(pid_, &status_, 0) == pid_;
      return;
    }
    while (!poll_ended()) {
      pollfd p{socket_, POLLIN, 0};
      poll(&p, socket_ >= 0 ? 1 : 0, 100);
    }
  }
  int exit_code() const {
    if (lost_) return -1;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }
  bool lost() const { return lost_; }

 private:
  int pid_;
  int socket_;
  int status_ = 0;
  bool ended_ = false;
  bool lost_ = false;
};

}  // namespace

ProcessResult wait_for(const StartedChild& child, int limit_s) {
  const pid_t pid = child.pid;
  ChildEnd end(child);
  ProcessResult r;
  r.pid = pid;
  r.forked = child.status_socket >= 0;
  pollfd fds[2] = {{child.out, POLLIN, 0}, {child.err, POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[65536];
  const Clock::time_point start = Clock::now();
  Clock::time_point exited_at{};
  Clock::time_point terminated_at{};
  bool reaped = false;
  bool killed = false;
  while (open_fds > 0) {
    const int ready = poll(fds, 2, 500);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; ready > 0 && i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP)) == 0) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
    if (!reaped && end.poll_ended()) {
      reaped = true;
      exited_at = Clock::now();
    }
    if (reaped && open_fds > 0 && seconds_since(exited_at) > 10) {
      r.err +=
          "\n[test runner] the program exited, but a process it left still holds its "
          "output open 10 s later (a rank or helper that outlived the run)\n";
      break;
    }
    if (!reaped && !killed && seconds_since(start) > limit_s) {
      r.err += "\n[test runner] still running after " + std::to_string(limit_s) +
               " s: sent SIGTERM (SIGKILL 5 s later)\n";
      kill(pid, SIGTERM);
      killed = true;
      terminated_at = Clock::now();
    }
    if (!reaped && killed && seconds_since(terminated_at) > 5) kill(pid, SIGKILL);
  }
  for (int i = 0; i < 2; ++i) {
    if (fds[i].fd >= 0) close(fds[i].fd);
  }
  if (!reaped) end.wait();
  r.exit_code = end.exit_code();
  if (end.lost()) r.err += "\n[test runner] the fork server went away before the child's status\n";
  return r;
}

int count_lines(const std::string& s) {
  int n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\n' || i + 1 == s.size()) ++n;
  }
  return n;
}

int count_occurrences(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

std::string make_temp_dir(const std::string& tag) {
  std::string pattern = "/tmp/ddpbench-test-" + tag + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

}  // namespace ddpbench::testing
