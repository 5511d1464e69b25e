// peer_loss.h — for ranks started by an external launcher (torchrun, Slurm, mpirun), where no
// ddpbench parent watches them: which peer is to blame when a collective fails or stalls. Each
// rank announces its host in the store when it joins and keeps a heartbeat there (its own store
// connection, beating from a thread, so a rank blocked in a collective or hung in compute still
// beats), publishing where its flight recorder says it is: the collectives it has issued and its
// step and phase. A rank that fails for a reason of its own says so in the store. A rank whose
// collective fails or stalls marks itself, then names the peers that failed on their own, those
// whose heartbeat stopped without a mark (they died outright: killed, or crashed without a word),
// or, when neither, those alive that never issued the collective it waits in (hung in compute),
// and records the finding in the store. Rank 0 serves the store, so a rank whose collective fails
// only once rank 0 has ended (it was waiting on rank 0, not on the dead peer) finds the store
// gone: the heartbeat thread therefore keeps the last finding it read, and that rank names the
// peer rank 0 found. With no finding either, rank 0 is the one lost.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "comm/flight_recorder.h"
#include "comm/store.h"
#include "launch/environment.h"

namespace ddpbench::launch {

class Heartbeat {
 public:
  // Announces this rank's host in the store at host:port and starts beating there through a
  // connection of its own, publishing `recorder`'s position (comm::FlightPosition).
  Heartbeat(const WorldInfo& world, const std::string& host, int port,
            std::shared_ptr<const comm::FlightRecorder> recorder,
            std::chrono::milliseconds timeout);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // What a rank recorded about the peers it blamed ("rank 3 on hostb stopped without a word
  // ..."), as last read; empty if none yet.
  std::string recorded_loss() const;

 private:
  std::shared_ptr<comm::Store> store_;
  std::shared_ptr<const comm::FlightRecorder> recorder_;
  mutable std::mutex mutex_;
  std::string recorded_loss_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// This rank failed for a reason of its own (an injected crash, a non-finite loss): a peer whose
// collective fails next names it with `reason` instead of calling it silent. Best effort: a store
// that is gone (or null) is ignored.
void mark_own_failure(comm::Store* store, int rank, const std::string& reason);

// The message for a failed collective on this rank: "rank 1 (hosta): a collective failed (...);
// rank 3 on hostb stopped without a word (killed, or crashed outright)". `seq` is the collective
// that failed (its flight-recorder number; -1 unknown: then no peer is called hung). `store` may
// be null: then only this rank and `what` are named. `heartbeat` (may be null) supplies the
// finding another rank recorded when the store is already gone.
std::string explain_collective_failure(comm::Store* store, const Heartbeat* heartbeat,
                                       const WorldInfo& world, const std::string& what,
                                       int64_t seq);

// The same for a collective that has not ended and cannot be cancelled (an MPI collective past
// --timeout, Note [An MPI job ends by MPI_Abort]): "rank 0 (hosta): <headline>; rank 1 on hosta
// hung: ...". Quicker than explain_collective_failure: the job ends right after it, so rank 0
// does not stay for the others to read its finding.
std::string explain_stalled_collective(comm::Store* store, const Heartbeat* heartbeat,
                                       const WorldInfo& world, const std::string& headline,
                                       int64_t seq);

}  // namespace ddpbench::launch
