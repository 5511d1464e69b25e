// speed_change.h — the performance gate's decision for one point from the repeat medians of a
// baseline and a current run (timing_spread.h): how much the throughput changed, with an interval,
// and whether that is `slower`, `ok` or `undecided`.
//
// Note [Deciding a slowdown]
// The change is the Hodges-Lehmann shift of the log repeat medians (current minus baseline), as a
// throughput ratio: exp(-shift) - 1, so -0.10 is 10% fewer samples/s. Its interval is the one the
// Mann-Whitney U test inverts, at kGateConfidence (99%, asv's level), and the test's p-value on
// the same repeat medians says whether there is a change at all. Why these: they assume no shape
// for the noise (run times on a shared machine are skewed and bimodal), they are exact for the few
// repeats a CI job can afford, and the interval and the test agree by construction (a bootstrap
// of 5 repeats would resample from 5 values and understate its width). With `allowed` the
// fraction of throughput that may be lost:
// - slower: p < 1 - kGateConfidence and the change is beyond -allowed (asv's rule: significant
//   AND beyond the factor);
// - ok: the interval's low end is no lower than -allowed: a slowdown beyond the allowance is ruled
//   out at 99% (a faster run is ok);
// - undecided: anything else. The interval reaches past -allowed but the data do not establish a
//   slowdown: too noisy to tell, and the gate says how many repeats per side would decide it (the
//   repeats whose interval half-width, z * sqrt(pi/3) * s * sqrt(2/R) for the pooled standard
//   deviation s of the log repeat medians, fits between the estimate and the boundary it must
//   clear). Fewer than 5 repeats a side cannot give a 99% interval at all: undecided.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::stats {

inline constexpr double kGateConfidence = 0.99;
// Fewest repeats per side with which an interval at kGateConfidence exists (C(10, 5) = 252 >= 200).
inline constexpr int64_t kMinGateRepeats = 5;
// Fewest paired rounds with which a signed-rank interval at kGateConfidence exists (2/2^8 < 0.01).
inline constexpr int64_t kMinPairedRounds = 8;
// Repeats beyond this are reported as "more than" it.
inline constexpr int64_t kMaxRepeatsAdvice = 10000;

enum class SpeedVerdict { kOk, kSlower, kUndecided };

struct SpeedChange {
  SpeedVerdict verdict = SpeedVerdict::kUndecided;
  double change = 0;         // current / baseline throughput - 1 (Hodges-Lehmann)
  double low = 0, high = 0;  // its interval (-1 and +inf when none exists)
  double confidence = 0;     // the interval's real confidence
  double p_value = 1;        // two-sided Mann-Whitney U on the repeat medians
  bool exact = false;        // the test's exact distribution
  // undecided: repeats per side that would decide, from the measured spread (kMaxRepeatsAdvice
  // + 1 when more; -1 when none would: the estimate sits on the boundary).
  int64_t repeats_needed = 0;
};

// `baseline` and `current` are repeat medians in seconds per step (all positive); `allowed` the
// fraction of throughput that may be lost, in [0, 1).
SpeedChange judge_speed(const std::vector<double>& baseline, const std::vector<double>& current,
                        double allowed);

// Note [Deciding a slowdown from paired rounds]
// `gate --ab` measures baseline and current in one job, in rounds: each round runs both once, in
// a random order, back to back. Round i's difference is log(current_i) - log(baseline_i) (its
// step-time ratio), and the change is the one-sample Hodges-Lehmann estimate of those differences
// (signed_rank.h) as a throughput ratio, with the interval the Wilcoxon signed-rank test inverts
// at kGateConfidence and that test's p-value. The verdict rules are Note [Deciding a slowdown]'s,
// on these figures. Why paired: a load that changes across the job (another job starting on the
// runner) slows both members of the rounds it covers, so it shifts both sides of those
// differences alike and drops out, where an unpaired test on the same numbers would read the
// slow rounds as noise (wider interval: undecided) or, when the load came while one side ran,
// as a change. The random order per round keeps a load that rises or falls within each round
// from favouring whichever side runs second. Undecided advice: the rounds whose half-width,
// z * sqrt(pi/3) * s_d / sqrt(R) for the standard deviation s_d of the differences, fits the gap.
// `baseline[i]` and `current[i]` are round i's seconds per step (same length, all positive).
SpeedChange judge_paired_speed(const std::vector<double>& baseline,
                               const std::vector<double>& current, double allowed);

// "-2.1% [-4.0%, +0.3%]" (the interval's bounds; "(-100%, +inf)" when none exists).
std::string describe_change(const SpeedChange& c);

}  // namespace ddpbench::stats
