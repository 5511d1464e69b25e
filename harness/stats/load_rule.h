// load_rule.h — whether the runner's load, not the build, may explain a slowdown that `ab` found.
//
// Note [A slowdown the load explains]
// `ab` records, per round and side, the share of the machine's CPUs that other processes took
// while that side ran (launch/runner_load.h). Interleaving in a random order makes a load that
// drifts across the job hit both sides alike, but a load that keeps coming back while one side
// runs (a periodic job in step with the rounds, or one that the slower side's longer runs catch
// more of) still lands on one side. So a `slower` verdict stands only when the current side did
// not run under more load: when the paired differences of the share (current minus baseline) are
// positive by the signed-rank test (p < kLoadSignificance) and their Hodges-Lehmann centre
// exceeds kLoadMargin of the machine, the load may explain the slowdown, and the point is
// `undecided` instead, naming the loads. A baseline under more load never excuses anything (it
// can only hide a slowdown, which the gate then does not call ok either: its interval is wider).
#pragma once

#include <cstdint>
#include <vector>

namespace ddpbench::stats {

inline constexpr double kLoadSignificance = 0.05;
// 2% of the machine's CPUs: below what a step time notices on the runners measured (METRICS).
inline constexpr double kLoadMargin = 0.02;

struct LoadComparison {
  bool current_busier = false;  // the rule above holds: the load may explain a slowdown
  double centre = 0;            // Hodges-Lehmann centre of current - baseline shares
  double p_value = 1;           // two-sided signed-rank on those differences
  double baseline_median = 0, current_median = 0;  // of each side's shares
};

// `baseline[i]` and `current[i]`: round i's other-process CPU share on each side, in [0, 1].
LoadComparison compare_load(const std::vector<double>& baseline,
                            const std::vector<double>& current);

}  // namespace ddpbench::stats
