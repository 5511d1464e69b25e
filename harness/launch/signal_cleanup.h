// signal_cleanup.h — what happens when SIGINT, SIGTERM or SIGHUP reaches a launching ddpbench
// process, whatever it is doing (setup, single or dp training, batch export, the DDP phase, report
// writing): every child process it started is stopped and reaped, every file and folder it staged
// is removed, one line on stderr says what happened, and it exits 128 + the signal, as a shell
// reports a process killed by that signal.
//
// How: install() blocks the three signals in this thread (and so in every thread started after
// it) and a watcher thread takes them with sigwait, so the cleanup runs as ordinary code, not in a
// signal handler, while the training thread is wherever it is. Whoever creates something that
// must not outlive an interrupted run registers it under the lock the watcher takes (hold()), so
// the watcher never misses a child or a file that exists, and a commit that holds the lock is
// all-or-nothing. The state is process-wide because signals are delivered to a process. A nested
// run (kNestedEnv set: a `scale` point, the --bisect twin) stays silent: its parent speaks.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace ddpbench::launch {

// Set in the environment of a ddpbench run started by another ddpbench (child_process.h).
inline constexpr const char* kNestedEnv = "DDPBENCH_NESTED";

class SignalCleanup {
 public:
  using Token = uint64_t;

  // The process's one instance.
  static SignalCleanup& process();

  // Starts handling SIGINT, SIGTERM and SIGHUP; idempotent. Call before any other thread starts.
  void install();
  // In a forked child before exec: the blocked signals would otherwise stay blocked in the new
  // program.
  static void reset_in_child();

  // While the returned lock is held, a signal's cleanup waits (recursive: the track/release calls
  // below may be made under it).
  std::unique_lock<std::recursive_mutex> hold();
  // A file or folder (removed recursively) to delete if a signal arrives before release().
  Token track_path(const std::string& path);
  // A child process to stop (SIGTERM, SIGKILL after 3 s) and reap if a signal arrives.
  Token track_child(pid_t pid);
  // Something to undo that is neither a path nor a child (a run's shared-memory segments): run
  // if a signal arrives, after every tracked child is reaped (so that none re-creates it).
  // Called under the lock: it must not block.
  Token track_action(std::function<void()> action);
  void release(Token token);

  // Who this process is in its one line ("rank 2": a rank of a job another launcher started, which
  // that launcher stops with SIGTERM when another rank ends the job); "" (the default) for none.
  void set_speaker(std::string speaker);

  // For a process about to end its MPI job at once (an MPI collective past --timeout cannot be
  // cancelled: Note [An MPI job ends by MPI_Abort]): what a signal would undo is undone now,
  // silently, and the lock is kept, so that nothing starts or commits afterwards. Results already
  // committed stay.
  void undo_for_abort();

  // Called under hold() once a run's results are renamed into place, all of them: from then on
  // only the summary remains to be printed, and a signal no longer undoes the run (it said
  // "removed 0 staged files" and left a complete folder without the summary). The run finishes
  // with its own exit code; should it not end within kFinishGrace, the signal's exit follows.
  void results_committed();
  static constexpr std::chrono::seconds kFinishGrace{5};
  // Test hook: with DDPBENCH_TEST_SIGNAL_AFTER_COMMIT set, sends this process SIGTERM and gives
  // the watcher a moment: the commit window, driven deterministically (interrupt_e2e_test.cpp).
  static void test_hook_after_commit();

 private:
  SignalCleanup() = default;
  [[noreturn]] void clean_up_and_exit(int signal);
  // Stops and reaps every tracked child, runs every action, removes every path; returns how many
  // paths it removed. Call with mutex_ held.
  size_t undo_tracked();

  std::recursive_mutex mutex_;
  bool installed_ = false;
  bool committed_ = false;
  Token next_ = 1;
  std::map<Token, std::string> paths_;
  std::map<Token, pid_t> children_;
  std::map<Token, std::function<void()>> actions_;
  std::string speaker_;
};

// Releases its token when it goes out of scope.
class TrackedResource {
 public:
  TrackedResource() = default;
  explicit TrackedResource(SignalCleanup::Token token) : token_(token) {}
  ~TrackedResource() { reset(); }
  TrackedResource(TrackedResource&& o) noexcept : token_(o.token_) { o.token_ = 0; }
  TrackedResource& operator=(TrackedResource&& o) noexcept {
    if (this != &o) {
      reset();
      token_ = o.token_;
      o.token_ = 0;
    }
    return *this;
  }
  void reset() {
    if (token_ != 0) SignalCleanup::process().release(token_);
    token_ = 0;
  }

 private:
  SignalCleanup::Token token_ = 0;
};

}  // namespace ddpbench::launch
