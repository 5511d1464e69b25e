// world_join.h — a launched rank joins its world: the rendezvous store (hosted by the ddpbench
// parent, by rank 0 under torchrun or Slurm, or found through MPI under mpirun), the communicator
// of the requested backend over it, and, under another launcher, the heartbeat that lets a failing
// rank name the peer to blame (launch/peer_loss.h).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "comm/backend_support.h"
#include "comm/communicator.h"
#include "comm/flight_recorder.h"
#include "comm/recording_communicator.h"
#include "comm/store.h"
#include "launch/environment.h"
#include "launch/peer_loss.h"

namespace ddpbench::launch {

struct JoinedWorld {
  // The rendezvous store. Under an MPI launcher the mpi backend meets through MPI, and the store
  // (rank 0's, found through MPI) carries only the heartbeats.
  std::shared_ptr<comm::Store> store;
  // The backend's communicator, recording into `recorder` (comm/recording_communicator.h).
  std::unique_ptr<comm::Communicator> comm;
  std::shared_ptr<comm::FlightRecorder> recorder;
  // Under another launcher (no ddpbench parent watches the ranks): this rank's heartbeat in the
  // store, which tells a rank whose collective fails or stalls which peer died, failed or hung.
  // Null for the ranks a ddpbench parent spawned.
  std::shared_ptr<Heartbeat> heartbeat;
};

// `timeout` bounds the rendezvous; collectives get 30 s more, so that a launcher watching
// progress with `timeout` names a hung rank before its peers' collectives fail. Under another
// launcher `timeout` bounds every collective: mpi's, which cannot be cancelled, end the job when
// they run past it, naming this rank, the collective and the peer to blame (Note [An MPI job ends
// by MPI_Abort]). Throws InputError for missing rendezvous variables or an unusable backend.
JoinedWorld join_world(const WorldInfo& world, comm::Backend backend,
                       std::chrono::milliseconds timeout,
                       const comm::RecordingOptions& recording = {});

}  // namespace ddpbench::launch
