// child_process.cpp — see child_process.h.
#include "launch/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "launch/signal_cleanup.h"

namespace ddpbench::launch {

std::string self_executable() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "/proc/self/exe" : self.string();
}

std::vector<std::string> environment_with(const std::vector<std::string>& overrides) {
  const auto name_of = [](const std::string& e) { return e.substr(0, e.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const bool overridden = std::any_of(overrides.begin(), overrides.end(), [&](const auto& o) {
      return name_of(o) == name_of(entry);
    });
    if (!overridden) env.push_back(entry);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

int run_program(const std::string& binary, const std::vector<std::string>& argv,
                const std::string& tmpdir, const std::string& log_path) {
  // The environment is built before fork: after it, only async-signal-safe calls are allowed.
  std::vector<std::string> env =
      environment_with({"TMPDIR=" + tmpdir, std::string(kNestedEnv) + "=1"});
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  SignalCleanup& cleanup = SignalCleanup::process();
  auto lock = cleanup.hold();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    SignalCleanup::reset_in_child();
    if (log_path.empty()) {
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) dup2(null, STDOUT_FILENO);
    } else {
      const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      if (log < 0) _exit(126);
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
    }
    execve(binary.c_str(), args.data(), envp.data());
    _exit(127);
  }
  const TrackedResource child(cleanup.track_child(pid));
  lock.unlock();
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_self(const std::vector<std::string>& argv, const std::string& tmpdir) {
  return run_program(self_executable(), argv, tmpdir, "");
}

}  // namespace ddpbench::launch
