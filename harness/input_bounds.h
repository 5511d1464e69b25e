// input_bounds.h — the largest step and batch counts any input may ask for, shared by the run's
// flags (cli/run_flags.cpp) and the scenario-file keys (scenarios/scenario_keys.cpp), so a value
// one of them accepts the other cannot refuse; and the --timeout bounds of run, scale and comm.
#pragma once

#include <cstdint>

namespace ddpbench {

// Far past any real run, they keep step and sample counts inside int64 arithmetic (steps x batch
// x ranks) and turn a typo into a clear "too large" instead of a run that never ends.
inline constexpr int64_t kMaxSteps = 1'000'000'000;
// --repeats: each repeat starts fresh processes (about a second each); beyond this is a typo.
inline constexpr int64_t kMaxRepeats = 1000;
inline constexpr int64_t kMaxBatch = int64_t{1} << 30;

// The launcher's progress clock and gloo's collective timeout both count in milliseconds: below a
// second every real step looks like a hang, and past a week the arithmetic gets close to
// overflowing (1e300 s printed "no progress for -9223372036854775 s").
inline constexpr double kMinTimeoutSeconds = 1;
inline constexpr double kMaxTimeoutSeconds = 7 * 24 * 3600;

}  // namespace ddpbench
