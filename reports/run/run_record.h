// run_record.h — the plain records a run produces (what it was: run_config.h). Reporters only
// format these (google/benchmark's Run / ReportContext split); nothing here runs or depends on
// torch. JSON is their canonical form (json_reporter.h), every other format is rendered from the
// same records.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/run/record_enums.h"
#include "reports/run/run_config.h"

namespace ddpbench::reports {

// Bumped whenever a field changes meaning, disappears or is added: the reader requires every
// field it knows (json_report_reader.h), so an older report is refused with its version named.
inline constexpr int kSchemaVersion = 13;
// The oldest schema the reader still takes: 8 lacks only the repeats and spread of the timed
// phase (FieldSpec::since), and `gate` judges its throughput by the single-sample rule.
inline constexpr int kOldestReadableSchema = 8;

// One correctness check of a mode against its reference. Every field the verdict reads is a
// number or an enum (Note [Recomputable verdicts] in verdict.h): `status` is what the verdict
// function computes from them, and a reader refuses a record where the two disagree.
struct CheckRecord {
  Stage name = Stage::kNone;  // what the check judges
  CheckStatus status = CheckStatus::kFail;
  Measure measure = Measure::kTolerance;
  double atol = 0.0;  // kTolerance: the elementwise rule |a - b| <= atol + rtol * |ref|
  double rtol = 0.0;
  double limit = 0.0;   // the bound on `error` (1 for kTolerance, 0 for kExact)
  int64_t items = 0;    // items compared (a loss per step, a tensor per step, ...)
  int64_t outside = 0;  // items beyond the limit that no scenario rule declares divergent
  // Items left uncompared because the reference cannot be told from rounding there: its value is
  // not finite (a NaN or inf evaluation loss), or the rounding floor measured for the item exceeds
  // what the run's precision can resolve (Note [Rounding floor measured on the model]). A check
  // whose items are all such is not_comparable, which neither passes nor fails the run;
  // incomparable_tensor and _step name the one furthest beyond the limit ("" when none is named).
  int64_t incomparable = 0;
  std::string incomparable_tensor;
  int64_t incomparable_step = -1;
  int64_t divergent = 0;     // items beyond the limit that the scenario declares divergent
  double error = 0.0;        // the worst item that is not divergent, in `measure`
  double ref_max_abs = 0.0;  // kTolerance: max |ref| over the compared elements
  double max_abs_diff = 0.0;
  double max_rel_diff = 0.0;
  std::string tensor;  // worst tensor ("" when not tensor-shaped)
  int64_t step = -1;   // step of the worst difference, -1 for final-state checks
  std::string detail;  // counts, the rule in words, and the reason of an expected divergence
  // Note [Rounding floor measured on the model] (compare/rounding_floor.h): items beyond `limit`
  // that are within kFloorMultiple x the rounding floor measured on the reference for them (their
  // `error` counts as error x limit / floor_limit), and the one held closest to its floor limit:
  // its tensor, step, own error in `measure` and the limit its floor allowed.
  int64_t floored = 0;
  std::string floor_tensor;
  int64_t floor_step = -1;
  double floor_error = 0.0;
  double floor_limit = 0.0;
  // A per-step check (its row's per_step): the steps at which it compared at least one item,
  // ascending; the steps it judged (Note [What a mode was judged against], verdict.h).
  std::vector<int64_t> steps_compared;
};

// Mean seconds per step phase in the perf phase.
struct PhaseRecord {
  double data = 0, forward = 0, backward = 0, comm_wait = 0, optimizer = 0;
};

// The perf phase of a mode: `warmup_steps` discarded, `timed_steps` measured (reports/METRICS.md).
// One repeat of the perf phase (run --repeats R: repeat 1 in the run's own processes, the others
// each in fresh ones): its timed steps.
// What the machine did besides the run while one repeat of a mode ran, measured by the launching
// process around it (launch/runner_load.h; repeat 1: the mode's check phase included). `gate` and
// `history` read it to say when two runs met different loads (Note [A slowdown the load explains],
// stats/load_rule.h). All 0 in a schema 12 report or where /proc cannot be read.
struct RunnerLoadRecord {
  double wall_s = 0;            // how long the repeat ran
  double others_cpu_share = 0;  // busy CPU time of other processes, as a share of all CPUs
  double steal_share = 0;       // of all CPU time: taken by the hypervisor for other guests
  double iowait_share = 0;      // of all CPU time: idle waiting for I/O
  double load_average_1m = 0;   // at the end of the repeat
  double cpu_mhz = 0;           // the CPUs' mean clock at the end; 0 where not readable
};

struct RepeatRecord {
  std::vector<double> step_times_s;  // every timed step's time (the max over ranks), in order
  RunnerLoadRecord runner_load;      // schema 13
};

// A point's timing over its repeats (stats/timing_spread.h, Note [Repeats, not steps]), computed
// from ThroughputRecord::repeats; `report` and `gate` recompute it and refuse a report where a
// figure differs (compare/report_audit.h).
struct SpreadRecord {
  int64_t repeats = 0;                         // 0: nothing timed (or a schema 8 report)
  std::vector<double> repeat_medians_s;        // each repeat's median step
  double median_step_s = 0;                    // the median of the repeat medians
  double median_low_s = 0, median_high_s = 0;  // its order-statistic interval
  double median_confidence = 0;                // that interval's real confidence (95% or less)
  double cv = 0;                               // every timed step pooled: sample stddev / mean
  double repeat_spread = 0;                    // (max - min) / median of the repeat medians
};

// One rank of a per-rank mode (ddp, zero) over the timed steps of repeat 1: per step, its compute
// (the step less its wait) and its wait for outstanding gradient collectives after backward.
struct RankTimingRecord {
  int64_t rank = 0;
  std::vector<double> compute_s;
  std::vector<double> comm_wait_s;
};

// Who the ranks waited for (Note [Stragglers], stats/straggler.h), computed from
// ThroughputRecord::ranks; `report` and `gate` recompute it and refuse a report where it differs.
struct StragglerRecord {
  int64_t rank = -1;                // the straggler; -1 when none is named
  double cost_s = 0;                // the median time per step the others waited for it
  int64_t slowest_steps = 0;        // timed steps in which it computed longest
  std::vector<double> vs_fastest;   // per rank: median compute / the fastest rank's
  std::vector<double> vs_own_best;  // per rank: median compute / its own fastest step
  std::string summary;              // "" for a mode without ranks
};

struct ThroughputRecord {
  int64_t warmup_steps = 0;
  int64_t timed_steps = 0;      // 0 = no perf phase ran
  double samples_per_step = 0;  // samples really processed per timed step, on average
  // samples_per_step / the median step (spread.median_step_s: the median of the repeats'
  // medians; with one repeat the p50 of its steps)
  double samples_per_s = 0;
  double samples_per_s_per_device = 0;  // samples_per_s / world_size
  double step_time_p50_s = 0, step_time_p90_s = 0, step_time_p99_s = 0;
  PhaseRecord phases;
  int64_t bytes_allreduced_per_step = 0;  // gradient bytes per rank (ddp)
  double bus_bandwidth_gb_s = 0;          // bytes * 2 (K-1) / K / median step time (ddp)
  double step_time_mean_s = 0;
  double step_time_cv = 0;  // sample stddev / mean of the step time
  // Why the figures are statistically weak (metrics/step_statistics.h, Note [Weak figures]): too
  // few timed steps, a high CV, a super-linear scaling efficiency; empty = sound.
  std::vector<std::string> weak_reasons;
  std::vector<RepeatRecord> repeats;  // the samples the figures above come from (phases: repeat 1)
  SpreadRecord spread;
  std::vector<RankTimingRecord> ranks;  // ddp, zero: every rank's timed steps (repeat 1)
  StragglerRecord straggler;            // computed from `ranks`
};

// What a data-parallel mode's checks compared it with, and how far it is from plain
// single-device training (an informational figure, never a verdict).
struct ReferenceRecord {
  std::string name;        // "single-device training" or "exact reference: ..."
  std::string comparison;  // "free-running": both trained from the same start, compared per step
  // The per-rank nonlinearities that make the mode differ from single-device training; empty
  // when it computes single-device training.
  std::vector<std::string> causes;
  // Mode against plain single-device training, when the reference is not that:
  int64_t steps = 0;              // checked steps
  double loss_diff = 0;           // |loss - single's| at the last checked step
  double loss_rel_diff = 0;       // the same relative to single's loss
  double max_parameter_diff = 0;  // max |parameter - single's| at the end
  std::string summary;            // one sentence with the figures above
  std::string state_file;         // the exact reference's final state ("" when plain)
  // How the rounding floor its checks were re-judged with was measured (Note [Rounding floor
  // measured on the model]); "" when every check passed at its fixed limit, or none could be.
  std::string floor;
  // The reference's loss per checked step: what the loss check compared `losses` with, so that
  // `report` and `gate` recompute that check (compare/report_audit.h).
  std::vector<double> losses;
};

// Where a failing mode first parted from its reference: the earliest step, and within it the
// first stage in the order a step computes them (forward: loss, then buffers; backward: gradients
// in the order backward produces them; the optimizer update), and the first tensor of that stage.
struct DivergenceRecord {
  Stage stage = Stage::kNone;  // the check that failed first; kNone: no divergence
  int64_t step = -1;           // -1: only the final state differs (free-running)
  std::string tensor;
  double error = 0;     // the difference, in the check's own measure
  std::string measure;  // e.g. "normalized error 1e-10": what `error` is compared with
  // --bisect: the same configuration re-run in float64. "persists" (an algorithm difference),
  // "vanishes" (rounding) or "" when not bisected; `bisect_detail` says with which figures.
  std::string bisect;
  std::string bisect_detail;
  // When it vanishes: every check of this mode in the float64 re-run, whose numbers make this
  // mode's float32 failures `rounding` (Note [Bisect's answer counts], reports/run/verdict.h).
  std::vector<CheckRecord> float64_checks;
};

// The evaluation pass after a mode's check phase (training/evaluation.h): the trained model in
// eval mode on a held-out set, accuracy and mean loss as the mode reduced them. Under DDP each
// rank evaluates its DistributedSampler(shuffle=False, drop_last=False) share, which repeats
// `padded` samples when the set does not divide by the world size; the figures with and without
// those duplicates are both kept. The check "evaluation" compares them with a single-device
// evaluation of the same trained weights.
struct EvaluationRecord {
  EvaluationStatus status = EvaluationStatus::kNotRun;  // kSkipped: see skipped_reason
  std::string skipped_reason;
  std::string dataset;  // the held-out set
  int64_t samples = 0;  // its size N
  int64_t count = 0;    // evaluations reduced, padding duplicates included
  int64_t padded = 0;   // count - samples
  double accuracy = 0;  // correct / count
  double mean_loss = 0;
  double accuracy_without_padding = 0;  // over the N distinct samples
  double mean_loss_without_padding = 0;
  std::string summary;  // one sentence: the figures and what padding changed
};

// What one rank of a per-rank mode (ddp, zero) held for training after its last step, measured
// from its live tensors (modes/common/memory_footprint.h), and its process's peak RSS.
struct RankMemoryRecord {
  int64_t rank = 0;
  int64_t parameter_bytes = 0;
  int64_t gradient_bytes = 0;
  int64_t optimizer_state_bytes = 0;
  int64_t peak_rss_bytes = 0;
};

// One checked step of a per-rank mode as rank 0's communicator saw it (Note [Collective
// accounting], training/collective_accounting.h): the collectives of the whole step by kind, and
// those of its gradient reduction (backward and the reduction, every micro-step).
struct StepCollectivesRecord {
  int64_t step = 0;
  int64_t micro_steps = 0;
  int64_t allreduce = 0;
  int64_t reduce_scatter = 0;
  int64_t allgather = 0;
  int64_t broadcast = 0;
  int64_t bytes = 0;  // every collective of the step, this rank's input bytes
  int64_t reduction_allreduce = 0;
  int64_t reduction_reduce_scatter = 0;
  int64_t reduction_bytes = 0;
};

// --amp: what autocast changed in a mode's steps, measured against float32 from the same state
// (training/float32_shadow.h). A figure, never a verdict: the checks judge the mode against a
// reference that autocasts as it does. Steps the GradScaler skipped are left out.
struct AmpErrorRecord {
  int64_t steps = 0;         // steps compared; 0 without --amp
  double update_error = 0;   // max |update - float32's| / the step's largest float32 update
  int64_t update_step = -1;  // where it was largest, and in which parameter
  std::string update_tensor;
  double loss_rel_error = 0;  // max |loss - float32's| / |float32's loss|
  int64_t loss_step = -1;
  std::string summary;  // one sentence with the figures above ("" without --amp)
};

struct ModeResult {
  Mode mode = Mode::kSingle;
  int64_t world_size = 1;
  std::vector<double> losses;        // per step
  std::vector<double> step_seconds;  // per step, wall time
  std::string state_file;            // file name of the final state, relative to the report
  // --amp fp16, per checked step: the GradScaler scale its backward used, and the steps it
  // skipped (an inf or NaN among the unscaled gradients); both empty without a scaler.
  std::vector<double> loss_scales;
  std::vector<int64_t> skipped_steps;
  std::vector<CheckRecord> checks;    // empty for the reference mode itself
  ReferenceRecord reference;          // what `checks` compared with (empty name: no checks)
  DivergenceRecord first_divergence;  // stage kNone when every check passed
  std::string gradient_check;         // "full" or "fingerprint": how gradients were compared
  std::string backend;                // collective backend ("" for single)
  int64_t bytes_per_step = 0;         // gradient bytes reduced per rank per step (ddp)
  int64_t buckets = 0;                // DDP buckets (0 for the naive strategy)
  // DDP: collectives rank 0 issued in backward and gradient reduction per optimizer step, over
  // every accumulation micro-step (buckets x reducing micro-steps, plus find_unused's used map).
  int64_t gradient_collectives_per_step = 0;
  // Peak CUDA memory allocated (torch.cuda.max_memory_allocated) over the mode's phases: per DDP
  // rank, per DP replica device, one for single; empty on the CPU.
  std::vector<int64_t> peak_device_memory_bytes;
  std::vector<std::string> hosts;  // ddp: each rank's host name, in rank order
  ThroughputRecord throughput;
  // throughput / (world_size x single-device throughput); -1 when not measured.
  double scaling_efficiency = -1;
  std::string scaling;  // "weak" (same per-device batch as single) or "strong" (same global batch)
  EvaluationRecord evaluation;
  AmpErrorRecord amp_vs_float32;
  // ddp, zero: per rank, in rank order (empty for the other modes).
  std::vector<RankMemoryRecord> memory;
  // ddp, zero: rank 0's collectives per checked step (schema 11 on; empty for c10d's Reducer,
  // which reduces past ddpbench's communicator).
  std::vector<StepCollectivesRecord> collectives;
};

struct RunReport {
  int schema_version = kSchemaVersion;
  RunContext context;
  RunConfig config;
  std::vector<ModeResult> results;
  // Computed from the checks by reports::run_verdict (verdict.h), never set by hand.
  Verdict verdict = Verdict::kNotJudged;
};

}  // namespace ddpbench::reports
