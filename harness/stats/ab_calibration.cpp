// ab_calibration.cpp — see ab_calibration.h.
#include "stats/ab_calibration.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "stats/rank_statistics.h"
#include "stats/speed_change.h"

namespace ddpbench::stats {

AbCalibration calibrate_ab(const std::vector<double>& log_ratios, int64_t gate_rounds,
                           double allowed, uint64_t seed) {
  AbCalibration c;
  c.rounds = static_cast<int64_t>(log_ratios.size());
  c.gate_rounds = std::min(gate_rounds, c.rounds);
  c.allowed = allowed;
  if (c.rounds < 2 || c.gate_rounds < 2) return c;
  double mean = 0;
  for (double d : log_ratios) mean += d / static_cast<double>(c.rounds);
  double ss = 0;
  for (double d : log_ratios) ss += (d - mean) * (d - mean);
  c.log_ratio_sd = std::sqrt(ss / static_cast<double>(c.rounds - 1));

  std::mt19937_64 rng(seed);
  std::vector<double> pool = log_ratios;
  int64_t slower = 0, undecided = 0;
  for (int64_t draw = 0; draw < kCalibrationDraws; ++draw) {
    // A partial Fisher-Yates shuffle: the first gate_rounds of `pool` are the subset.
    std::vector<double> baseline, current;
    for (int64_t i = 0; i < c.gate_rounds; ++i) {
      std::uniform_int_distribution<int64_t> pick(i, c.rounds - 1);
      std::swap(pool[static_cast<size_t>(i)], pool[static_cast<size_t>(pick(rng))]);
      // Under A/A which side is "current" is arbitrary: each round's sign is drawn, so a chance
      // lean of the measured rounds to one side is not read as the gate's false-alarm rate.
      const double sign = std::bernoulli_distribution(0.5)(rng) ? 1.0 : -1.0;
      baseline.push_back(1.0);
      current.push_back(std::exp(sign * pool[static_cast<size_t>(i)]));
    }
    const SpeedVerdict v = judge_paired_speed(baseline, current, allowed).verdict;
    slower += v == SpeedVerdict::kSlower;
    undecided += v == SpeedVerdict::kUndecided;
  }
  c.false_alarm_rate = static_cast<double>(slower) / kCalibrationDraws;
  c.undecided_rate = static_cast<double>(undecided) / kCalibrationDraws;

  const double z =
      (normal_upper_quantile((1 - kGateConfidence) / 2) + normal_upper_quantile(0.05)) *
      std::sqrt(M_PI / 3) * c.log_ratio_sd;
  c.detectable_slowdown = 1 - std::exp(-z / std::sqrt(static_cast<double>(c.gate_rounds)));
  const double boundary = -std::log(1 - allowed);
  const double rounds = boundary > 0 ? std::pow(z / boundary, 2) : 1e18;
  c.rounds_for_allowed = rounds > static_cast<double>(kMaxRepeatsAdvice)
                             ? kMaxRepeatsAdvice + 1
                             : std::max(kMinPairedRounds, static_cast<int64_t>(std::ceil(rounds)));
  return c;
}

}  // namespace ddpbench::stats
