// regression_gate.h — the CI gate: compares a current report with a baseline, point by point
// (scenario, mode, world size). A point fails when a check fails now, when a check that passed in
// the baseline no longer passes or is no longer there, when the baseline timed it and the current
// run did not, or when samples/s dropped by more than the allowed slowdown: with repeats on both
// sides (run --repeats), only when the drop is significant, and `undecided` when the runs are too
// noisy to tell (stats/speed_change.h). A gate never passes what it could not compare: what
// vanished or could not be decided fails unless the user accepts it (allow_missing,
// allow_undecided).
// Reports whose configurations differ in anything that changes the numbers (scenario, data,
// dtype, batch, world size, steps, seed, threads, device, DDP settings...) are refused, naming it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reports/gate/gate_record.h"
#include "reports/run/run_record.h"

namespace ddpbench::compare {

struct GateThresholds {
  double max_slowdown = 0.05;  // fraction of baseline samples/s that may be lost
  // Per point overrides, keyed "scenario/mode/world_size".
  std::map<std::string, double> point_max_slowdown;
  // --allow-missing: checks and throughput figures the baseline had and the current run lacks
  // (e.g. a --perf-only or --check-only current run) are listed, not failed.
  bool allow_missing = false;
  // --allow-undecided: a point too noisy to judge (Note [Deciding a slowdown]) is listed, not
  // failed.
  bool allow_undecided = false;
  // gate --history: per point key, the repeat medians (seconds per step) the current run's
  // throughput is judged against instead of the baseline report's (compare/report_history.h).
  std::map<std::string, std::vector<double>> lookback_medians;
  // gate --ab: per point key, each round's seconds per step of both builds, measured in one job
  // (Note [Deciding a slowdown from paired rounds]); they replace both reports' repeats.
  struct PairedRounds {
    std::vector<double> baseline_s, current_s;
  };
  std::map<std::string, PairedRounds> paired_rounds;
};

// The verdict records live with the other plain records, in reports/.
using GatePoint = reports::GatePoint;
using GateResult = reports::GateResult;

// Throws InputError when the two reports' configurations differ (naming the field and values), a
// threshold is not a fraction from 0 to 1 (NaN would let every slowdown through), or a per-point
// threshold names no point of the baseline.
GateResult run_gate(const reports::RunReport& baseline, const reports::RunReport& current,
                    const GateThresholds& thresholds);

// A point's key, "scenario/mode/world_size": how the gate, --thresholds and `history` name it.
std::string point_key(const reports::RunConfig& c, const reports::ModeResult& r);

// Each repeat's share of the CPUs that other processes took while it ran (report.json's
// runner_load, schema 13); empty where any repeat has none measured (an older report, or /proc
// unreadable): what Note [A slowdown the load explains] compares between two runs.
std::vector<double> others_cpu_shares(const reports::ThroughputRecord& t);

// Throws InputError naming the first setting that changes the numbers (or, where both timed, the
// timings) in which `a` and `b` differ; `who` starts the message ("gate: baseline and current
// runs").
void require_same_configuration(const reports::RunReport& a, const reports::RunReport& b,
                                const std::string& who);

}  // namespace ddpbench::compare
