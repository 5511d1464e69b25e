// json_report_reader.cpp — see json_report_reader.h. Field names and meanings: reports/SCHEMA.md.
#include "reports/json_report_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <set>

#include "errors.h"
#include "reports/json_fields.h"

namespace ddpbench::reports {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kMaxCores = int64_t{1} << 20;

RunContext read_context(const JsonFields& j) {
  RunContext c;
  c.ddpbench_version = j.text("ddpbench_version");
  c.git_revision = j.text("git_revision");
  c.host = j.text("host");
  c.cores = j.integer("cores", 0, kMaxCores);
  c.compiler = j.text("compiler");
  c.libtorch_version = j.text("libtorch_version");
  c.gloo_version = j.text_or("gloo_version", "");
  c.mpi_version = j.text_or("mpi_version", "");
  c.nccl_version = j.text_or("nccl_version", "");
  c.gpu_status = j.text_or("gpu_status", "");
  c.device = j.text_or("device", "");
  c.gpu_devices = j.text_or("gpu_devices", "");
  c.gpu_driver = j.text_or("gpu_driver", "");
  c.cuda_runtime = j.text_or("cuda_runtime", "");
  c.cudnn_version = j.text_or("cudnn_version", "");
  c.numerics = j.text_or("numerics", "");
  c.started_at = j.text_or("started_at", "");
  c.argv = j.texts("argv");
  return c;
}

SamplerRecord read_sampler(const JsonFields& j) {
  SamplerRecord s;
  s.dataset_size = j.integer("dataset_size", 0, kMaxCount);
  s.num_replicas = j.integer("num_replicas", 1, kMaxWorldSize);
  s.shuffle = j.flag("shuffle");
  s.drop_last = j.flag("drop_last");
  s.seed = j.integer("seed", 0, kAnyInt64);
  s.num_samples = j.integer("num_samples", 0, kMaxCount);
  s.total_size = j.integer("total_size", 0, kMaxCount);
  s.padded = j.integer("padded_per_epoch", 0, kMaxCount);
  s.dropped = j.integer("dropped_per_epoch", 0, kMaxCount);
  if (j.has("preview")) s.preview = j.integer_rows("preview", 0, kMaxCount);
  if (j.has("preview_padding")) {
    s.preview_padding = j.flag_rows("preview_padding");
    // The HTML report draws each preview index with its padding flag: the shapes must agree.
    bool same_shape = s.preview_padding.size() == s.preview.size();
    for (size_t r = 0; same_shape && r < s.preview.size(); ++r) {
      same_shape = s.preview_padding[r].size() == s.preview[r].size();
    }
    if (!same_shape) {
      throw InputError(fmt::format(
          "field {}.preview_padding does not match preview row for row (was the file edited?)",
          j.path()));
    }
  }
  return s;
}

DdpSettings read_ddp(const JsonFields& j) {
  DdpSettings d;
  d.impl = j.text("impl");
  d.bucket_cap_bytes = j.integer("bucket_cap_bytes", 0, kMaxCount);
  d.first_bucket_bytes = j.integer("first_bucket_bytes", 0, kMaxCount);
  d.comm_hook = j.text("comm_hook");
  d.broadcast_buffers = j.flag("broadcast_buffers");
  d.find_unused_parameters = j.flag("find_unused_parameters");
  d.sync_bn = j.flag("sync_bn");
  d.backend = j.text("backend");
  return d;
}

RunConfig read_config(const JsonFields& j) {
  RunConfig c;
  c.scenario = j.text("scenario");
  c.model = j.text("model");
  c.dataset = j.text("dataset");
  c.loss = j.text("loss");
  c.optimizer = j.text("optimizer");
  c.modes = j.texts("modes");
  c.steps = j.integer("steps", 1, kMaxCount);
  c.global_batch = j.integer("global_batch", 1, kMaxCount);
  c.local_batch = j.integer("local_batch", 1, kMaxCount);
  c.world_size = j.integer("world_size", 1, kMaxWorldSize);
  c.steps_per_epoch = j.integer("steps_per_epoch", 0, kMaxCount);
  c.seed = j.integer("seed", 0, kAnyInt64);
  c.threads = j.integer("threads", 1, kMaxCores);
  c.dtype = j.text("dtype");
  c.data_dir = j.text("data_dir");
  c.sampler = read_sampler(j.object("sampler"));
  // Reports written before these fields existed read as the defaults of that time.
  if (j.has("ddp")) c.ddp = read_ddp(j.object("ddp"));
  c.warmup_steps = j.integer_or("warmup_steps", 0, 0, kMaxCount);
  c.scaling = j.text_or("scaling", "weak");
  c.scenario_config = j.text_or("scenario_config", "");
  c.scenario_yaml = j.text_or("scenario_yaml", "");
  return c;
}

CheckRecord read_check(const JsonFields& j) {
  CheckRecord c;
  c.name = j.text("name");
  c.status = j.text("status");
  c.max_abs_diff = j.number_or_nan("max_abs_diff", 0, kInf);
  c.max_rel_diff = j.number_or_nan("max_rel_diff", 0, kInf);
  c.tensor = j.text("tensor");
  c.step = j.integer("step", -1, kMaxCount);
  c.detail = j.text("detail");
  return c;
}

PhaseRecord read_phases(const JsonFields& j) {
  PhaseRecord p;
  p.data = j.number("data_s", 0, kInf);
  p.forward = j.number("forward_s", 0, kInf);
  p.backward = j.number("backward_s", 0, kInf);
  p.comm_wait = j.number("comm_wait_s", 0, kInf);
  p.optimizer = j.number("optimizer_s", 0, kInf);
  return p;
}

// Throughput figures are what the gate compares: they must be finite, never null.
ThroughputRecord read_throughput(const JsonFields& j) {
  ThroughputRecord t;
  t.warmup_steps = j.integer("warmup_steps", 0, kMaxCount);
  t.timed_steps = j.integer("timed_steps", 0, kMaxCount);
  t.samples_per_step = j.number("samples_per_step", 0, kInf);
  t.samples_per_s = j.number("samples_per_s", 0, kInf);
  t.samples_per_s_per_device = j.number("samples_per_s_per_device", 0, kInf);
  t.step_time_p50_s = j.number("step_time_p50_s", 0, kInf);
  t.step_time_p90_s = j.number("step_time_p90_s", 0, kInf);
  t.step_time_p99_s = j.number("step_time_p99_s", 0, kInf);
  t.phases = read_phases(j.object("phases"));
  t.bytes_allreduced_per_step = j.integer("bytes_allreduced_per_step", 0, kMaxCount);
  t.bus_bandwidth_gb_s = j.number("bus_bandwidth_gb_s", 0, kInf);
  // Absent in reports written before the figures were flagged.
  if (j.has("step_time_mean_s")) t.step_time_mean_s = j.number("step_time_mean_s", 0, kInf);
  if (j.has("step_time_cv")) t.step_time_cv = j.number("step_time_cv", 0, kInf);
  if (j.has("weak_reasons")) t.weak_reasons = j.texts("weak_reasons");
  return t;
}

ReferenceRecord read_reference(const JsonFields& j) {
  ReferenceRecord r;
  r.name = j.text_or("name", "");
  r.comparison = j.text_or("comparison", "");
  if (j.has("causes")) r.causes = j.texts("causes");
  r.steps = j.integer_or("steps", 0, 0, kMaxCount);
  r.loss_diff = j.number_or_nan_or("loss_diff", 0.0, 0, kInf);
  r.loss_rel_diff = j.number_or_nan_or("loss_rel_diff", 0.0, 0, kInf);
  r.max_parameter_diff = j.number_or_nan_or("max_parameter_diff", 0.0, 0, kInf);
  r.summary = j.text_or("summary", "");
  r.state_file = j.text_or("state_file", "");
  return r;
}

DivergenceRecord read_divergence(const JsonFields& j) {
  DivergenceRecord d;
  d.stage = j.text_or("stage", "");
  d.step = j.integer_or("step", -1, -1, kMaxCount);
  d.tensor = j.text_or("tensor", "");
  d.error = j.number_or_nan_or("error", 0.0, 0, kInf);
  d.measure = j.text_or("measure", "");
  d.bisect = j.text_or("bisect", "");
  d.bisect_detail = j.text_or("bisect_detail", "");
  return d;
}

// Optional (reports written before the evaluation pass existed have none).
EvaluationRecord read_evaluation(const JsonFields& j) {
  EvaluationRecord e;
  e.status = j.text_or("status", "");
  e.skipped_reason = j.text_or("skipped_reason", "");
  e.dataset = j.text_or("dataset", "");
  e.samples = j.integer_or("samples", 0, 0, kMaxCount);
  e.count = j.integer_or("count", 0, 0, kMaxCount);
  e.padded = j.integer_or("padded", 0, 0, kMaxCount);
  e.accuracy = j.number_or_nan_or("accuracy", 0.0, 0, 1);
  e.mean_loss = j.number_or_nan_or("mean_loss", 0.0, 0, kInf);
  e.accuracy_without_padding = j.number_or_nan_or("accuracy_without_padding", 0.0, 0, 1);
  e.mean_loss_without_padding = j.number_or_nan_or("mean_loss_without_padding", 0.0, 0, kInf);
  e.summary = j.text_or("summary", "");
  return e;
}

ModeResult read_result(const JsonFields& j) {
  ModeResult r;
  r.mode = j.text("mode");
  if (r.mode != "single" && r.mode != "dp" && r.mode != "ddp") {
    throw InputError(
        fmt::format("field {}.mode is {}: expected single, dp or ddp (was the file edited?)",
                    j.path(), nlohmann::json(r.mode.substr(0, 40)).dump()));
  }
  r.world_size = j.integer("world_size", 1, kMaxWorldSize);
  // A diverged run's losses are NaN or infinite, which JSON writes as null.
  r.losses = j.numbers_or_nan("losses", -kInf, kInf);
  r.step_seconds = j.numbers("step_seconds", 0, kInf);
  r.state_file = j.text_or("state_file", "");
  if (j.has("checks")) {
    for (const JsonFields& c : j.objects("checks")) r.checks.push_back(read_check(c));
  }
  if (j.has("reference")) r.reference = read_reference(j.object("reference"));
  if (j.has("first_divergence")) r.first_divergence = read_divergence(j.object("first_divergence"));
  r.gradient_check = j.text_or("gradient_check", "");
  r.backend = j.text_or("backend", "");
  r.bytes_per_step = j.integer_or("bytes_per_step", 0, 0, kMaxCount);
  r.buckets = j.integer_or("buckets", 0, 0, kMaxCount);
  r.gradient_collectives_per_step = j.integer_or("gradient_collectives_per_step", 0, 0, kMaxCount);
  if (j.has("peak_device_memory_bytes")) {
    r.peak_device_memory_bytes = j.integers("peak_device_memory_bytes", 0, kMaxCount);
  }
  if (j.has("hosts")) r.hosts = j.texts("hosts");
  if (j.has("throughput")) r.throughput = read_throughput(j.object("throughput"));
  // -1 (or null, for an infinite ratio) means not measured.
  r.scaling_efficiency = j.number_or_nan_or("scaling_efficiency", -1.0, -1, kInf);
  if (std::isnan(r.scaling_efficiency)) r.scaling_efficiency = -1;
  r.scaling = j.text_or("scaling", "");
  if (j.has("evaluation")) r.evaluation = read_evaluation(j.object("evaluation"));
  return r;
}

// The formats and the gate key results by mode and world size: two results with one key would
// be rendered twice and matched once.
void require_unique_points(const std::vector<ModeResult>& results) {
  std::set<std::string> seen;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string key = fmt::format("{}/{}", results[i].mode, results[i].world_size);
    if (!seen.insert(key).second) {
      throw InputError(fmt::format(
          "results[{}] repeats the point {} (mode/world size): a report holds each point once "
          "(was the file edited, or two reports merged?)",
          i, key));
    }
  }
}

}  // namespace

RunReport report_from_json(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("schema_version")) {
    throw InputError(
        "not a ddpbench report: no schema_version field (was it written by ddpbench?)");
  }
  const JsonFields top(doc, "");
  const int64_t version = top.integer("schema_version", 0, kAnyInt64);
  if (version != kSchemaVersion) {
    throw InputError(
        fmt::format("report schema_version {} is not supported (this ddpbench reads {})", version,
                    kSchemaVersion));
  }
  RunReport r;
  r.schema_version = static_cast<int>(version);
  r.context = read_context(top.object("context"));
  r.config = read_config(top.object("config"));
  for (const JsonFields& m : top.objects("results")) r.results.push_back(read_result(m));
  if (r.results.empty()) {
    throw InputError(
        "holds no results (\"results\": []): there is nothing to judge; pass the report.json of "
        "a run that checked or timed something");
  }
  require_unique_points(r.results);
  r.passed = top.has("passed") ? top.flag("passed") : true;
  return r;
}

}  // namespace ddpbench::reports
