// peer_loss.h — for ranks started by an external launcher (torchrun, Slurm), where no ddpbench
// parent watches them: which peer was lost when a collective fails. Each rank announces its host
// in the store when it joins and keeps a heartbeat there (its own store connection, beating from
// a thread, so a rank blocked in a collective still beats). A rank whose collective fails marks
// itself failed, then names the ranks whose heartbeat stopped without such a mark: those died
// outright (killed, or crashed without a word). When the store itself is gone, rank 0 (which
// serves it) is the one lost.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
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

 private:
  std::shared_ptr<comm::Store> store_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The message for a failed collective on this rank: "rank 1 (hosta): a collective failed (...);
// rank 3 on hostb stopped without a word (killed, or crashed outright)". `store` may be null
// (the mpi backend has none): then only this rank and `what` are named.
std::string explain_collective_failure(comm::Store* store, const WorldInfo& world,
                                       const std::string& what);

}  // namespace ddpbench::launch
