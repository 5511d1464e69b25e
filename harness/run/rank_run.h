// rank_run.h — `ddpbench run` inside a launched world (spawned by ddpbench, torchrun, srun or
// mpirun): join the rendezvous, train this rank's DDP share, and hand the outcome on — to the
// spawning parent through its store, or, when launched externally, rank 0 also trains the
// single-device reference and writes the report itself.
#pragma once

#include <string>
#include <vector>

#include "launch/environment.h"
#include "requests/run_request.h"
#include "scenarios/registry.h"

namespace ddpbench::run {

int run_as_rank(const requests::RunRequest& request, const scenarios::ScenarioRegistry& registry,
                const launch::WorldInfo& world, const std::vector<std::string>& argv);

}  // namespace ddpbench::run
