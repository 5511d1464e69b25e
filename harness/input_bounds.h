// input_bounds.h — the largest step and batch counts any input may ask for, shared by the run's
// flags (cli/run_flags.cpp) and the scenario-file keys (scenarios/scenario_keys.cpp), so a value
// one of them accepts the other cannot refuse.
#pragma once

#include <cstdint>

namespace ddpbench {

// Far past any real run, they keep step and sample counts inside int64 arithmetic (steps x batch
// x ranks) and turn a typo into a clear "too large" instead of a run that never ends.
inline constexpr int64_t kMaxSteps = 1'000'000'000;
inline constexpr int64_t kMaxBatch = int64_t{1} << 30;

}  // namespace ddpbench
