// peer_loss.h — for ranks started by an external launcher (torchrun, Slurm), where no ddpbench
// parent watches them: which peer was lost when a collective fails. Each rank announces its host
// in the store when it joins and keeps a heartbeat there (its own store connection, beating from
// a thread, so a rank blocked in a collective still beats). A rank whose collective fails marks
// itself failed, then names the ranks whose heartbeat stopped without such a mark: those died
// outright (killed, or crashed without a word), and records the finding in the store. Rank 0
// serves the store, so a rank whose collective fails only once rank 0 has ended (it was waiting on
// rank 0, not on the dead peer) finds the store gone: the heartbeat thread therefore keeps the
// last finding it read, and that rank names the peer rank 0 found. With no finding either, rank 0
// is the one lost.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "comm/store.h"
#include "launch/environment.h"

namespace ddpbench::launch {

class Heartbeat {
 public:
  // Announces this rank's host and starts beating through a connection of its own.
  Heartbeat(const WorldInfo& world, std::chrono::milliseconds timeout);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // The lost peers some rank recorded ("rank 3 on hostb"), as last read; empty if none yet.
  std::string recorded_loss() const;

 private:
  std::shared_ptr<comm::Store> store_;
  mutable std::mutex mutex_;
  std::string recorded_loss_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The message for a failed collective on this rank: "rank 1 (hosta): a collective failed (...);
// rank 3 on hostb stopped without a word (killed, or crashed outright)". `store` may be null
// (the mpi backend has none): then only this rank and `what` are named. `heartbeat` (may be null)
// supplies the finding another rank recorded when the store is already gone.
std::string explain_collective_failure(comm::Store* store, const Heartbeat* heartbeat,
                                       const WorldInfo& world, const std::string& what);

}  // namespace ddpbench::launch
