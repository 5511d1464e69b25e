// signal_cleanup.cpp — see signal_cleanup.h.
#include "launch/signal_cleanup.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <utility>

namespace ddpbench::launch {
namespace {

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

const char* signal_label(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
  }
  return "a signal";
}

// True once `pid` is gone: reaped here, or already reaped by the thread that started it.
bool reaped(pid_t pid) {
  int status = 0;
  const pid_t r = waitpid(pid, &status, WNOHANG);
  return r == pid || (r < 0 && errno == ECHILD);
}

}  // namespace

SignalCleanup& SignalCleanup::process() {
  static SignalCleanup* instance = new SignalCleanup();  // never destroyed: the watcher uses it
  return *instance;
}

void SignalCleanup::install() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (installed_) return;
  installed_ = true;
  const sigset_t set = handled_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([this, set] {
    int sig = 0;
    while (sigwait(&set, &sig) != 0) {
    }
    clean_up_and_exit(sig);
  }).detach();
}

void SignalCleanup::reset_in_child() {
  const sigset_t set = handled_signals();
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

std::unique_lock<std::recursive_mutex> SignalCleanup::hold() {
  return std::unique_lock<std::recursive_mutex>(mutex_);
}

SignalCleanup::Token SignalCleanup::track_path(const std::string& path) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  paths_[next_] = path;
  return next_++;
}

SignalCleanup::Token SignalCleanup::track_child(pid_t pid) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  children_[next_] = pid;
  return next_++;
}

SignalCleanup::Token SignalCleanup::track_action(std::function<void()> action) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  actions_[next_] = std::move(action);
  return next_++;
}

void SignalCleanup::release(Token token) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  paths_.erase(token);
  children_.erase(token);
  actions_.erase(token);
}

void SignalCleanup::results_committed() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  committed_ = true;
}

void SignalCleanup::test_hook_after_commit() {
  if (std::getenv("DDPBENCH_TEST_SIGNAL_AFTER_COMMIT") == nullptr) return;
  // Process-directed, so that the watcher takes it; the pause lets it act before the run goes on.
  kill(getpid(), SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
}

size_t SignalCleanup::undo_tracked() {
  for (const auto& [token, pid] : children_) kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (const auto& [token, pid] : children_) {
    while (!reaped(pid)) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  for (const auto& [token, action] : actions_) action();
  // Newest first: a staged file goes before the folder it sits in.
  size_t removed = 0;
  for (auto it = paths_.rbegin(); it != paths_.rend(); ++it) {
    std::error_code ec;
    if (std::filesystem::remove_all(it->second, ec) > 0) ++removed;
  }
  return removed;
}

void SignalCleanup::set_speaker(std::string speaker) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  speaker_ = std::move(speaker);
}

void SignalCleanup::undo_for_abort() {
  mutex_.lock();  // never given back: the process is about to end
  if (!committed_) undo_tracked();
}

void SignalCleanup::clean_up_and_exit(int sig) {
  // Taken and never given back: nothing may start or commit once the cleanup has begun.
  mutex_.lock();
  const bool nested = std::getenv(kNestedEnv) != nullptr;
  if (committed_) {
    // The results are whole and in place: let the run print its summary and exit as it will.
    mutex_.unlock();
    if (!nested) {
      std::fprintf(stderr, "ddpbench: %s arrived after the results were written; finishing\n",
                   signal_label(sig));
    }
    std::this_thread::sleep_for(kFinishGrace);
    _exit(128 + sig);
  }
  const size_t removed = undo_tracked();
  // A progress line may be half-drawn on the terminal.
  const char* fresh_line = isatty(STDERR_FILENO) ? "\n" : "";
  if (nested) _exit(128 + sig);  // the parent that started this run says it
  std::fprintf(stderr,
               "%sddpbench: %s%sinterrupted by %s; stopped %zu child process(es), removed %zu "
               "staged file(s) or folder(s)\n",
               fresh_line, speaker_.c_str(), speaker_.empty() ? "" : " ", signal_label(sig),
               children_.size(), removed);
  std::fflush(stderr);
  _exit(128 + sig);
}

}  // namespace ddpbench::launch
