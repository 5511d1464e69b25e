// stale_reclaim.h — the private folders and shared-memory segments of a ddpbench process are
// named after it and locked while it lives, so that a later run can remove what a run killed
// outright (SIGKILL, OOM killer, power to the container) left behind.
//
// Note [Reclaiming what a killed run left]
// A launching parent undoes everything it made on every path it controls: a normal end, an
// error, a failed or hung rank (worker_group.cpp) and a signal (signal_cleanup.h). SIGKILL of
// the parent is the one ending it cannot act on: its workers die with it (PR_SET_PDEATHSIG), but
// their folder under TMPDIR (ddpbench-workers-*) and any /dev/shm segment not yet unlinked
// (ranks unlink theirs as soon as every peer has mapped it, so only a kill during set-up leaves
// one) stay. So each such thing carries its owner's pid in its name and a lock the kernel drops
// when the owner dies:
//   - TMPDIR/ddpbench-<kind>-<pid>-XXXXXX: a folder; its owner holds an exclusive flock on it.
//   - /dev/shm/ddpbench-shm-<pid>-<random>-g<G>-r<R> (comm/shm_names.h): <pid> is the launching
//     parent (rank 0 under other launchers); every process that maps it holds a shared flock.
// Every process that makes such things first reclaims the stale ones: an entry whose owner pid
// is gone (kill(pid, 0) says ESRCH) AND whose lock it can take without waiting. The two tests
// cover each other's gaps: a pid is reused, and the lock may not yet be taken in the moment
// after the entry is created (its owner is alive then); a TMPDIR or /dev/shm shared with another
// pid namespace makes a live owner's pid look dead, but its lock is still held. Nothing else is
// touched: names that do not parse (an older ddpbench's folders among them) are left alone.
#pragma once

#include <sys/types.h>

#include <string>

namespace ddpbench::launch {

// A folder <TMPDIR>/ddpbench-<kind>-<pid>-XXXXXX (mode 0700) that this process holds locked until
// the object goes; the caller removes it (and registers it with SignalCleanup). Throws
// std::runtime_error when it cannot be made.
class OwnedTempDir {
 public:
  explicit OwnedTempDir(const std::string& kind);
  ~OwnedTempDir();  // drops the lock only; removing is the caller's (it may still be in use)
  OwnedTempDir(const OwnedTempDir&) = delete;
  OwnedTempDir& operator=(const OwnedTempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int lock_fd_ = -1;
};

// The Note's test for one entry: `owner` is gone and nobody holds `path` locked.
bool is_stale(const std::string& path, pid_t owner);

// Removes the stale ddpbench-<kind>-<pid>-XXXXXX folders under TMPDIR and the stale ddpbench
// segments in /dev/shm (see the Note). Never throws; returns how many entries it removed.
int reclaim_stale_leftovers();

}  // namespace ddpbench::launch
