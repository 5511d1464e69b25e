// worker_command.h — `ddpbench run` inside a launched world (spawned by ddpbench, torchrun, srun
// or mpirun): join the rendezvous, train this rank's DDP share, and hand the results on — to the
// spawning parent through its store, or, when launched externally, rank 0 finishes the run and
// writes the report itself.
#pragma once

#include <string>
#include <vector>

#include "cli/run_command.h"
#include "launch/environment.h"

namespace ddpbench::cli {

int run_as_worker(const RunCommandOptions& options, const scenarios::ScenarioRegistry& registry,
                  const launch::WorldInfo& world, const std::vector<std::string>& argv);

}  // namespace ddpbench::cli
