// record_fields.h — one declared field list per run record: every field's JSON name, its bounds,
// and whether it changes the numbers a run computes. The JSON writer and reader
// (json_reporter.cpp, json_report_reader.cpp), the rank outcome codec (training/outcome_codec.cpp)
// and the regression gate (compare/regression_gate.cpp) all walk these lists with a visitor, so a
// field added here is written, read, checked, sent between processes and compared by the gate
// without anyone remembering to (tests/unit/compare_regression_gate_test.cpp walks the lists too).
//
// A visitor is called as v(key, field, spec) with `field` a (const) reference of one of: bool,
// int64_t, double, std::string, an enum of record_enums.h, a vector of those, a vector of int64
// rows or bool rows, a record listed here, or a vector of records.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "reports/run/run_record.h"

namespace ddpbench::reports {

// Bounds that keep every count far inside int64 and every world size plausible.
inline constexpr int64_t kMaxCount = int64_t{1} << 48;
inline constexpr int64_t kMaxWorldSize = int64_t{1} << 20;
inline constexpr int64_t kMaxCores = int64_t{1} << 20;
inline constexpr int64_t kAnyInt64 = std::numeric_limits<int64_t>::max();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

// Whether two runs that differ in a field can be compared: kNumbers fields change what is
// computed or how fast, and the gate refuses runs that differ in one (software versions are
// kReport on purpose: an upgrade is what a gate is often asked to judge). kTimings fields shape
// only the timed phase (its warm-up): they matter only where both runs timed, and a check-only
// run (no timed phase) compares with a timed one under --allow-missing.
enum class Affects { kReport, kNumbers, kTimings };

struct FieldSpec {
  Affects affects = Affects::kReport;
  int64_t int_lo = 0, int_hi = kMaxCount;  // integers (and integer arrays)
  double lo = 0, hi = kInf;                // numbers (and number arrays)
  bool null_is_nan = false;  // JSON null reads as NaN (a diverged loss, an overflowed diff)
  // The schema version that added the field: a report of an older version may lack it (the
  // reader leaves it at its default).
  int since = 0;
  // A list written only when it has elements: a report without it reads it as empty, so a field
  // that most runs leave empty adds nothing to their reports (config.options).
  bool omit_empty = false;
};

constexpr FieldSpec plain(Affects a = Affects::kReport) { return {a}; }
constexpr FieldSpec count(int64_t lo, int64_t hi, Affects a = Affects::kReport) {
  return {a, lo, hi};
}
constexpr FieldSpec number(double lo, double hi, Affects a = Affects::kReport,
                           bool null_is_nan = false) {
  return {a, 0, kMaxCount, lo, hi, null_is_nan};
}
constexpr FieldSpec number_or_nan(double lo, double hi, Affects a = Affects::kReport) {
  return number(lo, hi, a, true);
}
constexpr FieldSpec since(int version, FieldSpec s) {
  s.since = version;
  return s;
}
constexpr FieldSpec omitted_when_empty(FieldSpec s) {
  s.omit_empty = true;
  return s;
}
constexpr Affects kNumbers = Affects::kNumbers;
constexpr Affects kTimings = Affects::kTimings;

template <typename T>
struct IsRecord : std::false_type {};

// Declares `fields(v, r)` for const and non-const `r` of record type T.
#define DDPBENCH_RECORD_FIELDS(T)         \
  template <>                             \
  struct IsRecord<T> : std::true_type {}; \
  template <typename V, typename R>       \
  std::enable_if_t<std::is_same_v<std::remove_const_t<R>, T>> fields(V& v, R& r)

DDPBENCH_RECORD_FIELDS(RunContext) {
  v("ddpbench_version", r.ddpbench_version, plain());
  v("git_revision", r.git_revision, plain());
  v("host", r.host, plain());
  v("cores", r.cores, count(0, kMaxCores));
  v("compiler", r.compiler, plain());
  v("libtorch_version", r.libtorch_version, plain());
  v("gloo_version", r.gloo_version, plain());
  v("mpi_version", r.mpi_version, plain());
  v("nccl_version", r.nccl_version, plain());
  v("gpu_status", r.gpu_status, plain());
  v("device", r.device, plain(kNumbers));
  v("gpu_devices", r.gpu_devices, plain(kNumbers));
  v("gpu_driver", r.gpu_driver, plain());
  v("cuda_runtime", r.cuda_runtime, plain());
  v("cudnn_version", r.cudnn_version, plain());
  v("numerics", r.numerics, plain(kNumbers));
  v("started_at", r.started_at, plain());
  v("argv", r.argv, plain());
}

DDPBENCH_RECORD_FIELDS(SamplerRecord) {
  v("dataset_size", r.dataset_size, count(0, kMaxCount, kNumbers));
  v("num_replicas", r.num_replicas, count(1, kMaxWorldSize, kNumbers));
  v("shuffle", r.shuffle, plain(kNumbers));
  v("drop_last", r.drop_last, plain(kNumbers));
  v("seed", r.seed, count(0, kAnyInt64, kNumbers));
  v("num_samples", r.num_samples, count(0, kMaxCount, kNumbers));
  v("total_size", r.total_size, count(0, kMaxCount, kNumbers));
  v("padded_per_epoch", r.padded, count(0, kMaxCount, kNumbers));
  v("dropped_per_epoch", r.dropped, count(0, kMaxCount, kNumbers));
  v("preview", r.preview, count(0, kMaxCount));
  v("preview_padding", r.preview_padding, plain());
}

DDPBENCH_RECORD_FIELDS(DdpSettings) {
  v("impl", r.impl, plain(kNumbers));
  v("bucket_cap_bytes", r.bucket_cap_bytes, count(0, kMaxCount, kNumbers));
  v("first_bucket_bytes", r.first_bucket_bytes, count(0, kMaxCount, kNumbers));
  v("comm_hook", r.comm_hook, plain(kNumbers));
  v("broadcast_buffers", r.broadcast_buffers, plain(kNumbers));
  v("find_unused_parameters", r.find_unused_parameters, plain(kNumbers));
  v("sync_bn", r.sync_bn, plain(kNumbers));
  v("backend", r.backend, plain(kNumbers));
  v("static_graph", r.static_graph, plain(kNumbers));
  v("gradient_as_bucket_view", r.gradient_as_bucket_view, plain(kNumbers));
}

DDPBENCH_RECORD_FIELDS(RunConfig) {
  v("scenario", r.scenario, plain(kNumbers));
  v("model", r.model, plain(kNumbers));
  v("dataset", r.dataset, plain(kNumbers));
  v("loss", r.loss, plain(kNumbers));
  v("optimizer", r.optimizer, plain(kNumbers));
  v("modes", r.modes, plain(kNumbers));
  v("steps", r.steps, count(1, kMaxCount, kNumbers));
  v("global_batch", r.global_batch, count(1, kMaxCount, kNumbers));
  v("local_batch", r.local_batch, count(1, kMaxCount, kNumbers));
  v("world_size", r.world_size, count(1, kMaxWorldSize, kNumbers));
  v("steps_per_epoch", r.steps_per_epoch, count(0, kMaxCount, kNumbers));
  v("seed", r.seed, count(0, kAnyInt64, kNumbers));
  v("threads", r.threads, count(1, kMaxCores, kNumbers));
  v("dtype", r.dtype, plain(kNumbers));
  v("amp", r.amp, plain(kNumbers));
  v("data_dir", r.data_dir, plain(kNumbers));
  v("sampler", r.sampler, plain(kNumbers));
  v("ddp", r.ddp, plain(kNumbers));
  v("warmup_steps", r.warmup_steps, count(0, kMaxCount, kTimings));
  v("repeats", r.repeats, since(9, count(1, kMaxCount)));
  v("cpu_pinning", r.cpu_pinning, since(9, plain(kTimings)));
  v("slowdown", r.slowdown, since(9, plain()));
  v("scaling", r.scaling, plain(kNumbers));
  // How the scenario was configured names files (a path differs between machines); the scenario
  // it produced, every key and tolerance, is scenario_yaml.
  v("scenario_config", r.scenario_config, plain());
  v("scenario_yaml", r.scenario_yaml, plain(kNumbers));
  v("accumulation_steps", r.accumulation_steps, count(1, kMaxCount, kNumbers));
  v("no_sync", r.no_sync, plain(kNumbers));
  v("comparison", r.comparison, plain(kNumbers));
  v("gradient_check", r.gradient_check, plain(kNumbers));
  v("inject_fault", r.inject_fault, plain(kNumbers));
  v("first_step", r.first_step, count(0, kMaxCount, kNumbers));
  v("eval_size", r.eval_size, count(0, kMaxCount, kNumbers));
  // The file's path differs between machines and its content is `model`'s hash: report only.
  v("model_file", r.model_file, plain());
  v("model_notes", r.model_notes, plain());
  v("zero_stage", r.zero_stage, count(0, 3, kNumbers));
  v("shard_group", r.shard_group, since(11, count(0, kMaxWorldSize, kNumbers)));
  // A trace is an output of the run, not a setting: report only.
  v("trace_file", r.trace_file, plain());
  v("trace_sha256", r.trace_sha256, plain());
  // The run options recorded only as given (requests/run_options.h rows reported as "options"):
  // an option declared without a field of its own is still written, read and compared.
  v("options", r.options, omitted_when_empty(plain(kNumbers)));
}

// The rule a check applies (measure, tolerances, limit) is kNumbers: the gate refuses to compare
// runs judged by different rules (a widened tolerance is a different check).
DDPBENCH_RECORD_FIELDS(CheckRecord) {
  v("name", r.name, plain(kNumbers));
  v("status", r.status, plain());
  v("measure", r.measure, plain(kNumbers));
  v("atol", r.atol, number(0, kInf, kNumbers));
  v("rtol", r.rtol, number(0, kInf, kNumbers));
  v("limit", r.limit, number(0, kInf, kNumbers));
  v("items", r.items, count(0, kMaxCount));
  v("outside", r.outside, count(0, kMaxCount));
  v("divergent", r.divergent, count(0, kMaxCount));
  v("error", r.error, number_or_nan(0, kInf));
  v("ref_max_abs", r.ref_max_abs, number_or_nan(0, kInf));
  v("max_abs_diff", r.max_abs_diff, number_or_nan(0, kInf));
  v("max_rel_diff", r.max_rel_diff, number_or_nan(0, kInf));
  v("tensor", r.tensor, plain());
  v("step", r.step, count(-1, kMaxCount));
  v("detail", r.detail, plain());
  v("incomparable", r.incomparable, count(0, kMaxCount));
  v("incomparable_tensor", r.incomparable_tensor, plain());
  v("incomparable_step", r.incomparable_step, count(-1, kMaxCount));
  v("floored", r.floored, count(0, kMaxCount));
  v("floor_tensor", r.floor_tensor, plain());
  v("floor_step", r.floor_step, count(-1, kMaxCount));
  v("floor_error", r.floor_error, number(0, kInf));
  v("floor_limit", r.floor_limit, number(0, kInf));
  v("steps_compared", r.steps_compared, since(12, count(0, kMaxCount)));
}

DDPBENCH_RECORD_FIELDS(PhaseRecord) {
  v("data_s", r.data, number(0, kInf));
  v("forward_s", r.forward, number(0, kInf));
  v("backward_s", r.backward, number(0, kInf));
  v("comm_wait_s", r.comm_wait, number(0, kInf));
  v("optimizer_s", r.optimizer, number(0, kInf));
}

// Throughput figures are what the gate compares: finite, never null.
DDPBENCH_RECORD_FIELDS(RunnerLoadRecord) {
  v("wall_s", r.wall_s, number(0, kInf));
  v("others_cpu_share", r.others_cpu_share, number(0, 1));
  v("steal_share", r.steal_share, number(0, 1));
  v("iowait_share", r.iowait_share, number(0, 1));
  v("load_average_1m", r.load_average_1m, number(0, kInf));
  v("cpu_mhz", r.cpu_mhz, number(0, kInf));
}

DDPBENCH_RECORD_FIELDS(RepeatRecord) {
  v("step_times_s", r.step_times_s, number(0, kInf));
  v("runner_load", r.runner_load, since(13, plain()));
}

DDPBENCH_RECORD_FIELDS(SpreadRecord) {
  v("repeats", r.repeats, count(0, kMaxCount));
  v("repeat_medians_s", r.repeat_medians_s, number(0, kInf));
  v("median_step_s", r.median_step_s, number(0, kInf));
  v("median_low_s", r.median_low_s, number(0, kInf));
  v("median_high_s", r.median_high_s, number(0, kInf));
  v("median_confidence", r.median_confidence, number(0, 1));
  v("cv", r.cv, number(0, kInf));
  v("repeat_spread", r.repeat_spread, number(0, kInf));
}

DDPBENCH_RECORD_FIELDS(RankTimingRecord) {
  v("rank", r.rank, count(0, kMaxWorldSize));
  v("compute_s", r.compute_s, number(0, kInf));
  v("comm_wait_s", r.comm_wait_s, number(0, kInf));
}

DDPBENCH_RECORD_FIELDS(StragglerRecord) {
  v("rank", r.rank, count(-1, kMaxWorldSize));
  v("cost_s", r.cost_s, number(0, kInf));
  v("slowest_steps", r.slowest_steps, count(0, kMaxCount));
  v("vs_fastest", r.vs_fastest, number(0, kInf));
  v("vs_own_best", r.vs_own_best, number(0, kInf));
  v("summary", r.summary, plain());
}

DDPBENCH_RECORD_FIELDS(ThroughputRecord) {
  v("warmup_steps", r.warmup_steps, count(0, kMaxCount));
  v("timed_steps", r.timed_steps, count(0, kMaxCount));
  v("samples_per_step", r.samples_per_step, number(0, kInf));
  v("samples_per_s", r.samples_per_s, number(0, kInf));
  v("samples_per_s_per_device", r.samples_per_s_per_device, number(0, kInf));
  v("step_time_p50_s", r.step_time_p50_s, number(0, kInf));
  v("step_time_p90_s", r.step_time_p90_s, number(0, kInf));
  v("step_time_p99_s", r.step_time_p99_s, number(0, kInf));
  v("step_time_mean_s", r.step_time_mean_s, number(0, kInf));
  v("step_time_cv", r.step_time_cv, number(0, kInf));
  v("weak_reasons", r.weak_reasons, plain());
  v("phases", r.phases, plain());
  v("bytes_allreduced_per_step", r.bytes_allreduced_per_step, count(0, kMaxCount));
  v("bus_bandwidth_gb_s", r.bus_bandwidth_gb_s, number(0, kInf));
  v("repeats", r.repeats, since(9, plain()));
  v("spread", r.spread, since(9, plain()));
  v("ranks", r.ranks, since(10, plain()));
  v("straggler", r.straggler, since(10, plain()));
}

DDPBENCH_RECORD_FIELDS(ReferenceRecord) {
  v("name", r.name, plain());
  v("comparison", r.comparison, plain());
  v("causes", r.causes, plain());
  v("steps", r.steps, count(0, kMaxCount));
  v("loss_diff", r.loss_diff, number_or_nan(0, kInf));
  v("loss_rel_diff", r.loss_rel_diff, number_or_nan(0, kInf));
  v("max_parameter_diff", r.max_parameter_diff, number_or_nan(0, kInf));
  v("summary", r.summary, plain());
  v("state_file", r.state_file, plain());
  v("floor", r.floor, plain());
  v("losses", r.losses, number_or_nan(-kInf, kInf));
}

DDPBENCH_RECORD_FIELDS(DivergenceRecord) {
  v("stage", r.stage, plain());
  v("step", r.step, count(-1, kMaxCount));
  v("tensor", r.tensor, plain());
  v("error", r.error, number_or_nan(0, kInf));
  v("measure", r.measure, plain());
  v("bisect", r.bisect, plain());
  v("bisect_detail", r.bisect_detail, plain());
  v("float64_checks", r.float64_checks, plain());
}

DDPBENCH_RECORD_FIELDS(EvaluationRecord) {
  v("status", r.status, plain());
  v("skipped_reason", r.skipped_reason, plain());
  v("dataset", r.dataset, plain());
  v("samples", r.samples, count(0, kMaxCount));
  v("count", r.count, count(0, kMaxCount));
  v("padded", r.padded, count(0, kMaxCount));
  v("accuracy", r.accuracy, number_or_nan(0, 1));
  v("mean_loss", r.mean_loss, number_or_nan(0, kInf));
  v("accuracy_without_padding", r.accuracy_without_padding, number_or_nan(0, 1));
  v("mean_loss_without_padding", r.mean_loss_without_padding, number_or_nan(0, kInf));
  v("summary", r.summary, plain());
}

DDPBENCH_RECORD_FIELDS(RankMemoryRecord) {
  v("rank", r.rank, count(0, kMaxWorldSize));
  v("parameter_bytes", r.parameter_bytes, count(0, kMaxCount));
  v("gradient_bytes", r.gradient_bytes, count(0, kMaxCount));
  v("optimizer_state_bytes", r.optimizer_state_bytes, count(0, kMaxCount));
  v("peak_rss_bytes", r.peak_rss_bytes, count(0, kMaxCount));
}

DDPBENCH_RECORD_FIELDS(StepCollectivesRecord) {
  v("step", r.step, count(0, kMaxCount));
  v("micro_steps", r.micro_steps, count(0, kMaxCount));
  v("allreduce", r.allreduce, count(0, kMaxCount));
  v("reduce_scatter", r.reduce_scatter, count(0, kMaxCount));
  v("allgather", r.allgather, count(0, kMaxCount));
  v("broadcast", r.broadcast, count(0, kMaxCount));
  v("bytes", r.bytes, count(0, kMaxCount));
  v("reduction_allreduce", r.reduction_allreduce, count(0, kMaxCount));
  v("reduction_reduce_scatter", r.reduction_reduce_scatter, count(0, kMaxCount));
  v("reduction_bytes", r.reduction_bytes, count(0, kMaxCount));
}

DDPBENCH_RECORD_FIELDS(AmpErrorRecord) {
  v("steps", r.steps, count(0, kMaxCount));
  v("update_error", r.update_error, number_or_nan(0, kInf));
  v("update_step", r.update_step, count(-1, kMaxCount));
  v("update_tensor", r.update_tensor, plain());
  v("loss_rel_error", r.loss_rel_error, number_or_nan(0, kInf));
  v("loss_step", r.loss_step, count(-1, kMaxCount));
  v("summary", r.summary, plain());
}

DDPBENCH_RECORD_FIELDS(ModeResult) {
  v("mode", r.mode, plain(kNumbers));
  v("world_size", r.world_size, count(1, kMaxWorldSize, kNumbers));
  // A diverged run's losses are NaN or infinite, which JSON writes as null.
  v("losses", r.losses, number_or_nan(-kInf, kInf));
  v("loss_scales", r.loss_scales, number(0, kInf));
  v("skipped_steps", r.skipped_steps, count(0, kMaxCount));
  v("step_seconds", r.step_seconds, number(0, kInf));
  v("state_file", r.state_file, plain());
  v("checks", r.checks, plain());
  v("reference", r.reference, plain());
  v("first_divergence", r.first_divergence, plain());
  v("gradient_check", r.gradient_check, plain());
  v("backend", r.backend, plain(kNumbers));
  v("bytes_per_step", r.bytes_per_step, count(0, kMaxCount));
  v("buckets", r.buckets, count(0, kMaxCount));
  v("gradient_collectives_per_step", r.gradient_collectives_per_step, count(0, kMaxCount));
  v("peak_device_memory_bytes", r.peak_device_memory_bytes, count(0, kMaxCount));
  v("hosts", r.hosts, plain());
  v("throughput", r.throughput, plain());
  // -1: not measured.
  v("scaling_efficiency", r.scaling_efficiency, number(-1, kInf));
  v("scaling", r.scaling, plain());
  v("evaluation", r.evaluation, plain());
  v("amp_vs_float32", r.amp_vs_float32, plain());
  v("memory", r.memory, plain());
  v("collectives", r.collectives, since(11, plain()));
}

#undef DDPBENCH_RECORD_FIELDS

template <typename T>
inline constexpr bool kIsRecord = IsRecord<std::remove_const_t<T>>::value;

}  // namespace ddpbench::reports
