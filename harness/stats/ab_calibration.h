// ab_calibration.h — what the interleaved gate can tell on this runner, from A/A rounds (the
// same build on both sides of every round): the spread of the paired log ratios, the gate's
// false alarms at a chosen number of rounds, the smallest slowdown it detects with 95% power,
// and the rounds a threshold needs.
//
// Note [Calibrating the gate on its runner]
// The false-alarm rate is measured, not assumed: of the A/A rounds, kCalibrationDraws subsets of
// `gate_rounds` rounds (drawn without replacement, seeded) are each judged as `ab` would judge
// them, and the share called `slower` is the false-alarm rate (the share `undecided` beside it).
// Rounds of one job are exchangeable under A/A, and so are the two sides of a round (both are
// the same build), so each drawn round's log ratio gets a random sign: a subset is a job that
// could have run, and a chance lean of the measured rounds to one side (15 of 20 "current"
// slower happened on this machine) is not counted as the gate's error. The
// power figures come from the spread s of the A/A log ratios: the signed-rank interval's
// half-width at R rounds is about z * sqrt(pi/3) * s / sqrt(R) (Note [Deciding a slowdown from
// paired rounds]), so a slowdown is found with 95% power when its log ratio exceeds
// (z_0.005 + z_0.05) * sqrt(pi/3) * s / sqrt(R), and a threshold `allowed` needs the R at which
// that equals -log(1 - allowed).
#pragma once

#include <cstdint>
#include <vector>

namespace ddpbench::stats {

inline constexpr int64_t kCalibrationDraws = 2000;

struct AbCalibration {
  int64_t rounds = 0;              // A/A rounds measured
  double log_ratio_sd = 0;         // the spread of their log ratios
  int64_t gate_rounds = 0;         // the rounds the figures below are for
  double false_alarm_rate = 0;     // share of subsets called slower
  double undecided_rate = 0;       // share of subsets called undecided
  double detectable_slowdown = 0;  // throughput loss found with 95% power at gate_rounds
  double allowed = 0;              // the threshold asked about
  int64_t rounds_for_allowed = 0;  // rounds that find `allowed` with 95% power (at least 8)
};

// `log_ratios`: each A/A round's log(current / baseline) seconds per step.
AbCalibration calibrate_ab(const std::vector<double>& log_ratios, int64_t gate_rounds,
                           double allowed, uint64_t seed);

}  // namespace ddpbench::stats
