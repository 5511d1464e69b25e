// errors.h — the error types that decide ddpbench's exit codes (docs/ARCHITECTURE.md, "Exit
// codes"). Every layer may throw them; only the CLI maps them to codes.
// InputError means the user can fix it (bad flag, missing or corrupt file): the CLI prints one
// line and exits 2. Anything else escaping a command is an internal failure.
#pragma once

#include <stdexcept>
#include <string>

namespace ddpbench {

// Bad input or usage. The message must name the problem and the fix in one line.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitWorkerFailed = 3;
// Internal to spawned workers, never seen by users: "a collective failed, probably because a
// peer died". The parent prefers to blame a rank that failed for another reason.
inline constexpr int kExitPeerLost = 4;
// SIGINT, SIGTERM or SIGHUP: 128 + the signal, as shells report it (launch/signal_cleanup.h).

// A training process failed: crash, hang past its timeout, or a non-finite loss. Exit 3; the
// message names the rank (or "single") and the cause.
class WorkerFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ddpbench
