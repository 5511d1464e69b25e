// execute_run.h — `ddpbench run`, once its flags are parsed. The launch environment decides the
// role: with no launcher variables this process is the launching parent (it trains single and DP
// itself, spawns the DDP ranks, and writes the report); under ddpbench's own spawn, torchrun,
// srun or mpirun it is a rank (rank_run.h). Order matters for "nothing half-written": every input
// is validated and --out is proven writable before any training, and files are committed
// together at the end.
#pragma once

#include <string>
#include <vector>

#include "requests/run_request.h"

namespace ddpbench::scenarios {
class ScenarioRegistry;
}
namespace ddpbench::launch {
class RankZygote;
}

namespace ddpbench::run {

// `argv` is this process's command line: spawned ranks run it again; `command_line` spells a
// request as one (for the --bisect re-run); `zygote`, where not null, forks the ranks
// (launch/rank_zygote.h). Returns the exit code; throws InputError (exit 2), WorkerFailure
// (exit 3); a signal is launch/signal_cleanup.h's.
int execute_run(const requests::RunRequest& request, const scenarios::ScenarioRegistry& registry,
                const std::vector<std::string>& argv, const requests::CommandLineOf& command_line,
                launch::RankZygote* zygote);

}  // namespace ddpbench::run
