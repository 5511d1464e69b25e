// load_rule.h — whether the runner's load, not the build, may explain a slowdown that `ab`, `gate`
// or `history` found.
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
// `undecided` instead, naming the loads, unless the slowdown is too large for that load to
// explain: the least slowdown the gate's interval allows exceeds kLoadAmplification times the
// extra share (a neighbour taking 7% more of the CPUs does not explain a build 80% slower; the
// first version of this rule excused exactly that, in the suite). A baseline under more load
// never excuses anything (it
// can only hide a slowdown, which the gate then does not call ok either: its interval is wider).
// The two-job `gate` (and `history`) apply the same rule to two unpaired samples, each repeat's
// share (report.json's runner_load, schema 13): the Mann-Whitney test in place of the signed-rank
// one and the Hodges-Lehmann shift between the samples as the centre. There the rule matters
// most: the two jobs ran at different times, so a load that came between them lands wholly on
// one side, where the interleaved rounds of `ab` split it.
#pragma once

#include <cstdint>
#include <vector>

namespace ddpbench::stats {

inline constexpr double kLoadSignificance = 0.05;
// 2% of the machine's CPUs: below what a step time notices on the runners measured (METRICS).
inline constexpr double kLoadMargin = 0.02;
// How much throughput one share of the CPUs taken by others can cost at most: measured here
// (reports/METRICS.md, "How much a neighbour's load slows a step"), toy_cnn ddp x2 lost about
// its own share (0.3 to 0.7 of the CPUs: 40% slower); twice that, so that a load that may
// explain a slowdown is never overruled by noise in the measure of it.
inline constexpr double kLoadAmplification = 2.0;

struct LoadComparison {
  bool current_busier = false;  // the current side ran under significantly more load
  double centre = 0;            // Hodges-Lehmann centre of current - baseline shares
  double p_value = 1;           // two-sided signed-rank on those differences
  double baseline_median = 0, current_median = 0;  // of each side's shares
};

// `baseline[i]` and `current[i]`: round i's other-process CPU share on each side, in [0, 1].
LoadComparison compare_load(const std::vector<double>& baseline,
                            const std::vector<double>& current);

// Whether `load` may explain a slowdown of which `least_slowdown` is the least the gate's
// interval allows (a fraction of throughput, 0.08 = 8% fewer samples/s): the rule above.
bool load_explains(const LoadComparison& load, double least_slowdown);

// Two unpaired samples of other-process CPU shares (each a run's repeats), in [0, 1].
LoadComparison compare_unpaired_load(const std::vector<double>& baseline,
                                     const std::vector<double>& current);

}  // namespace ddpbench::stats
