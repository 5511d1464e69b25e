// ring_comparison.h — ranks started by torchrun, Slurm or mpirun have no ddpbench parent to read
// their flight recorders (Note [The flight recorder]), so after their modes they compare the rings
// themselves: every rank all-gathers every rank's ring and fingerprint chain and runs the parent's
// analysis (launch/flight_analysis.h) on them. A backend that reduced mismatched collectives
// without an error (MPI does) then ends the run with exit 3 instead of a report of wrong numbers.
#pragma once

#include <optional>

#include "comm/communicator.h"
#include "comm/flight_recorder.h"
#include "launch/flight_analysis.h"

namespace ddpbench::launch {

// Collective. The finding when the ranks issued different collectives; nullopt when they agree.
std::optional<FlightFinding> compare_rings(comm::Communicator& comm,
                                           const comm::FlightRecorder& recorder);

}  // namespace ddpbench::launch
