// execute_comm.h — `ddpbench comm`, once its flags are parsed: collective bandwidth in
// nccl-tests' style (size, count, type, time, algbw, busbw, #wrong per collective and size),
// the host's memcpy bandwidth beside it, comm.json and comm.csv under --out, and an OK/FAILED
// footer. The launch environment decides the role, as for `run`: with no launcher variables this
// process measures memcpy, spawns --gpus ranks (launch/worker_group.h) and writes the report;
// under mpirun, torchrun or srun every process is a rank and rank 0 writes it.
#pragma once

#include <string>
#include <vector>

#include "requests/run_request.h"

namespace ddpbench::launch {
class RankZygote;
}

namespace ddpbench::commands {

// `argv` is this process's command line (spawned ranks run it again); `zygote`, where not null,
// forks the ranks (launch/rank_zygote.h). Returns 0 (OK) or 1 (a
// wrong element: FAILED); throws InputError (exit 2, nothing started or written) and
// WorkerFailure (exit 3).
int execute_comm(const requests::CommRequest& request, const std::vector<std::string>& argv,
                 launch::RankZygote* zygote);

}  // namespace ddpbench::commands
