// process_role.h — whether this process is a worker that a ddpbench parent spawned. The CLI uses
// it to pick an exit code the parent understands (a failed collective in a spawned worker means
// "a peer was lost", so the parent can blame the peer that failed first).
#pragma once

namespace ddpbench::run {

bool is_spawned_worker();

}  // namespace ddpbench::run
