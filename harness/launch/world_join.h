// world_join.h — a launched rank joins its world: the rendezvous store (hosted by the ddpbench
// parent, by rank 0 under torchrun or Slurm, or found through MPI under mpirun) and the
// communicator of the requested backend over it.
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

namespace ddpbench::launch {

struct JoinedWorld {
  std::shared_ptr<comm::Store> store;  // null for the mpi backend (mpirun is its rendezvous)
  // The backend's communicator, recording into `recorder` (comm/recording_communicator.h).
  std::unique_ptr<comm::Communicator> comm;
  std::shared_ptr<comm::FlightRecorder> recorder;
};

// `timeout` bounds the rendezvous; collectives get 30 s more, so that a launcher watching
// progress with `timeout` names a hung rank before its peers' collectives fail. Throws InputError
// for missing rendezvous variables or an unusable backend.
JoinedWorld join_world(const WorldInfo& world, comm::Backend backend,
                       std::chrono::milliseconds timeout,
                       const comm::RecordingOptions& recording = {});

}  // namespace ddpbench::launch
