// process_role.h — whether this process is a worker that a ddpbench parent spawned. The CLI uses
// it to pick an exit code the parent understands (a failed collective in a spawned worker means
// "a peer was lost", so the parent can blame the peer that failed first), and to set the process
// up for its role.
#pragma once

namespace ddpbench::run {

bool is_spawned_worker();

// First thing in main: a spawned worker names itself after its rank (ps, top: "ddpbench-rank1");
// any other process starts the signal handling that cleans up after SIGINT, SIGTERM or SIGHUP
// (launch/signal_cleanup.h), before any thread exists.
void prepare_process(const char* argv0);

}  // namespace ddpbench::run
