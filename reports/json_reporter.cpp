// json_reporter.cpp — see json_reporter.h.
#include "reports/json_reporter.h"

#include <fmt/format.h>

#include "errors.h"

namespace ddpbench::reports {
using nlohmann::json;

void to_json(json& j, const RunContext& c) {
  j = json{{"ddpbench_version", c.ddpbench_version},
           {"git_revision", c.git_revision},
           {"host", c.host},
           {"cores", c.cores},
           {"compiler", c.compiler},
           {"libtorch_version", c.libtorch_version},
           {"gloo_version", c.gloo_version},
           {"mpi_version", c.mpi_version},
           {"nccl_version", c.nccl_version},
           {"gpu_status", c.gpu_status},
           {"device", c.device},
           {"gpu_devices", c.gpu_devices},
           {"gpu_driver", c.gpu_driver},
           {"cuda_runtime", c.cuda_runtime},
           {"cudnn_version", c.cudnn_version},
           {"numerics", c.numerics},
           {"started_at", c.started_at},
           {"argv", c.argv}};
}

void from_json(const json& j, RunContext& c) {
  j.at("ddpbench_version").get_to(c.ddpbench_version);
  j.at("git_revision").get_to(c.git_revision);
  j.at("host").get_to(c.host);
  j.at("cores").get_to(c.cores);
  j.at("compiler").get_to(c.compiler);
  j.at("libtorch_version").get_to(c.libtorch_version);
  c.gloo_version = j.value("gloo_version", "");
  c.mpi_version = j.value("mpi_version", "");
  c.nccl_version = j.value("nccl_version", "");
  c.gpu_status = j.value("gpu_status", "");
  c.device = j.value("device", "");
  c.gpu_devices = j.value("gpu_devices", "");
  c.gpu_driver = j.value("gpu_driver", "");
  c.cuda_runtime = j.value("cuda_runtime", "");
  c.cudnn_version = j.value("cudnn_version", "");
  c.numerics = j.value("numerics", "");
  c.started_at = j.value("started_at", "");
  j.at("argv").get_to(c.argv);
}

void to_json(json& j, const SamplerRecord& s) {
  j = json{{"dataset_size", s.dataset_size},
           {"num_replicas", s.num_replicas},
           {"shuffle", s.shuffle},
           {"drop_last", s.drop_last},
           {"seed", s.seed},
           {"num_samples", s.num_samples},
           {"total_size", s.total_size},
           {"padded_per_epoch", s.padded},
           {"dropped_per_epoch", s.dropped},
           {"preview", s.preview},
           {"preview_padding", s.preview_padding}};
}

void from_json(const json& j, SamplerRecord& s) {
  j.at("dataset_size").get_to(s.dataset_size);
  j.at("num_replicas").get_to(s.num_replicas);
  j.at("shuffle").get_to(s.shuffle);
  j.at("drop_last").get_to(s.drop_last);
  j.at("seed").get_to(s.seed);
  j.at("num_samples").get_to(s.num_samples);
  j.at("total_size").get_to(s.total_size);
  j.at("padded_per_epoch").get_to(s.padded);
  j.at("dropped_per_epoch").get_to(s.dropped);
  if (j.contains("preview")) j.at("preview").get_to(s.preview);
  if (j.contains("preview_padding")) j.at("preview_padding").get_to(s.preview_padding);
}

void to_json(json& j, const DdpSettings& d) {
  j = json{{"impl", d.impl},
           {"bucket_cap_bytes", d.bucket_cap_bytes},
           {"first_bucket_bytes", d.first_bucket_bytes},
           {"comm_hook", d.comm_hook},
           {"broadcast_buffers", d.broadcast_buffers},
           {"find_unused_parameters", d.find_unused_parameters},
           {"sync_bn", d.sync_bn},
           {"backend", d.backend}};
}

void from_json(const json& j, DdpSettings& d) {
  j.at("impl").get_to(d.impl);
  j.at("bucket_cap_bytes").get_to(d.bucket_cap_bytes);
  j.at("first_bucket_bytes").get_to(d.first_bucket_bytes);
  j.at("comm_hook").get_to(d.comm_hook);
  j.at("broadcast_buffers").get_to(d.broadcast_buffers);
  j.at("find_unused_parameters").get_to(d.find_unused_parameters);
  j.at("sync_bn").get_to(d.sync_bn);
  j.at("backend").get_to(d.backend);
}

void to_json(json& j, const RunConfig& c) {
  j = json{{"scenario", c.scenario},
           {"model", c.model},
           {"dataset", c.dataset},
           {"loss", c.loss},
           {"optimizer", c.optimizer},
           {"modes", c.modes},
           {"steps", c.steps},
           {"global_batch", c.global_batch},
           {"local_batch", c.local_batch},
           {"world_size", c.world_size},
           {"steps_per_epoch", c.steps_per_epoch},
           {"seed", c.seed},
           {"threads", c.threads},
           {"dtype", c.dtype},
           {"data_dir", c.data_dir},
           {"sampler", c.sampler},
           {"ddp", c.ddp},
           {"warmup_steps", c.warmup_steps},
           {"scaling", c.scaling}};
}

void from_json(const json& j, RunConfig& c) {
  j.at("scenario").get_to(c.scenario);
  j.at("model").get_to(c.model);
  j.at("dataset").get_to(c.dataset);
  j.at("loss").get_to(c.loss);
  j.at("optimizer").get_to(c.optimizer);
  j.at("modes").get_to(c.modes);
  j.at("steps").get_to(c.steps);
  j.at("global_batch").get_to(c.global_batch);
  j.at("local_batch").get_to(c.local_batch);
  j.at("world_size").get_to(c.world_size);
  j.at("steps_per_epoch").get_to(c.steps_per_epoch);
  j.at("seed").get_to(c.seed);
  j.at("threads").get_to(c.threads);
  j.at("dtype").get_to(c.dtype);
  j.at("data_dir").get_to(c.data_dir);
  j.at("sampler").get_to(c.sampler);
  // Reports written before these fields existed read as the defaults of that time.
  if (j.contains("ddp")) j.at("ddp").get_to(c.ddp);
  c.warmup_steps = j.value("warmup_steps", int64_t{0});
  c.scaling = j.value("scaling", std::string("weak"));
}

void to_json(json& j, const CheckRecord& c) {
  j = json{{"name", c.name},
           {"status", c.status},
           {"max_abs_diff", c.max_abs_diff},
           {"max_rel_diff", c.max_rel_diff},
           {"tensor", c.tensor},
           {"step", c.step},
           {"detail", c.detail}};
}

void from_json(const json& j, CheckRecord& c) {
  j.at("name").get_to(c.name);
  j.at("status").get_to(c.status);
  j.at("max_abs_diff").get_to(c.max_abs_diff);
  j.at("max_rel_diff").get_to(c.max_rel_diff);
  j.at("tensor").get_to(c.tensor);
  j.at("step").get_to(c.step);
  j.at("detail").get_to(c.detail);
}

void to_json(json& j, const PhaseRecord& p) {
  j = json{{"data_s", p.data},
           {"forward_s", p.forward},
           {"backward_s", p.backward},
           {"comm_wait_s", p.comm_wait},
           {"optimizer_s", p.optimizer}};
}

void from_json(const json& j, PhaseRecord& p) {
  j.at("data_s").get_to(p.data);
  j.at("forward_s").get_to(p.forward);
  j.at("backward_s").get_to(p.backward);
  j.at("comm_wait_s").get_to(p.comm_wait);
  j.at("optimizer_s").get_to(p.optimizer);
}

void to_json(json& j, const ThroughputRecord& t) {
  j = json{{"warmup_steps", t.warmup_steps},
           {"timed_steps", t.timed_steps},
           {"samples_per_step", t.samples_per_step},
           {"samples_per_s", t.samples_per_s},
           {"samples_per_s_per_device", t.samples_per_s_per_device},
           {"step_time_p50_s", t.step_time_p50_s},
           {"step_time_p90_s", t.step_time_p90_s},
           {"step_time_p99_s", t.step_time_p99_s},
           {"phases", t.phases},
           {"bytes_allreduced_per_step", t.bytes_allreduced_per_step},
           {"bus_bandwidth_gb_s", t.bus_bandwidth_gb_s}};
}

void from_json(const json& j, ThroughputRecord& t) {
  j.at("warmup_steps").get_to(t.warmup_steps);
  j.at("timed_steps").get_to(t.timed_steps);
  j.at("samples_per_step").get_to(t.samples_per_step);
  j.at("samples_per_s").get_to(t.samples_per_s);
  j.at("samples_per_s_per_device").get_to(t.samples_per_s_per_device);
  j.at("step_time_p50_s").get_to(t.step_time_p50_s);
  j.at("step_time_p90_s").get_to(t.step_time_p90_s);
  j.at("step_time_p99_s").get_to(t.step_time_p99_s);
  j.at("phases").get_to(t.phases);
  j.at("bytes_allreduced_per_step").get_to(t.bytes_allreduced_per_step);
  j.at("bus_bandwidth_gb_s").get_to(t.bus_bandwidth_gb_s);
}

void to_json(json& j, const ReferenceRecord& r) {
  j = json{{"name", r.name},
           {"comparison", r.comparison},
           {"causes", r.causes},
           {"steps", r.steps},
           {"loss_diff", r.loss_diff},
           {"loss_rel_diff", r.loss_rel_diff},
           {"max_parameter_diff", r.max_parameter_diff},
           {"summary", r.summary},
           {"state_file", r.state_file}};
}

void from_json(const json& j, ReferenceRecord& r) {
  r.name = j.value("name", "");
  r.comparison = j.value("comparison", "");
  if (j.contains("causes")) j.at("causes").get_to(r.causes);
  r.steps = j.value("steps", int64_t{0});
  r.loss_diff = j.value("loss_diff", 0.0);
  r.loss_rel_diff = j.value("loss_rel_diff", 0.0);
  r.max_parameter_diff = j.value("max_parameter_diff", 0.0);
  r.summary = j.value("summary", "");
  r.state_file = j.value("state_file", "");
}

void to_json(json& j, const DivergenceRecord& d) {
  j = json{{"stage", d.stage},     {"step", d.step},     {"tensor", d.tensor},
           {"error", d.error},     {"measure", d.measure}, {"bisect", d.bisect},
           {"bisect_detail", d.bisect_detail}};
}

void from_json(const json& j, DivergenceRecord& d) {
  d.stage = j.value("stage", "");
  d.step = j.value("step", int64_t{-1});
  d.tensor = j.value("tensor", "");
  d.error = j.value("error", 0.0);
  d.measure = j.value("measure", "");
  d.bisect = j.value("bisect", "");
  d.bisect_detail = j.value("bisect_detail", "");
}

void to_json(json& j, const ModeResult& r) {
  j = json{{"mode", r.mode},
           {"world_size", r.world_size},
           {"losses", r.losses},
           {"step_seconds", r.step_seconds},
           {"state_file", r.state_file},
           {"checks", r.checks},
           {"reference", r.reference},
           {"first_divergence", r.first_divergence},
           {"gradient_check", r.gradient_check},
           {"backend", r.backend},
           {"bytes_per_step", r.bytes_per_step},
           {"buckets", r.buckets},
           {"peak_device_memory_bytes", r.peak_device_memory_bytes},
           {"hosts", r.hosts},
           {"throughput", r.throughput},
           {"scaling_efficiency", r.scaling_efficiency},
           {"scaling", r.scaling}};
}

void from_json(const json& j, ModeResult& r) {
  j.at("mode").get_to(r.mode);
  j.at("world_size").get_to(r.world_size);
  j.at("losses").get_to(r.losses);
  j.at("step_seconds").get_to(r.step_seconds);
  r.state_file = j.value("state_file", "");
  if (j.contains("checks")) j.at("checks").get_to(r.checks);
  if (j.contains("reference")) j.at("reference").get_to(r.reference);
  if (j.contains("first_divergence")) j.at("first_divergence").get_to(r.first_divergence);
  r.gradient_check = j.value("gradient_check", "");
  r.backend = j.value("backend", "");
  r.bytes_per_step = j.value("bytes_per_step", int64_t{0});
  r.buckets = j.value("buckets", int64_t{0});
  r.peak_device_memory_bytes = j.value("peak_device_memory_bytes", std::vector<int64_t>{});
  r.hosts = j.value("hosts", std::vector<std::string>{});
  if (j.contains("throughput")) j.at("throughput").get_to(r.throughput);
  r.scaling_efficiency = j.value("scaling_efficiency", -1.0);
  r.scaling = j.value("scaling", "");
}

json to_json(const RunReport& report) {
  return json{{"schema_version", report.schema_version},
              {"context", report.context},
              {"config", report.config},
              {"results", report.results},
              {"passed", report.passed}};
}

RunReport report_from_json(const json& doc) {
  if (!doc.is_object() || !doc.contains("schema_version")) {
    throw InputError(
        "not a ddpbench report: no schema_version field (was it written by ddpbench?)");
  }
  const int version = doc.at("schema_version").get<int>();
  if (version != kSchemaVersion) {
    throw InputError(
        fmt::format("report schema_version {} is not supported (this ddpbench reads {})", version,
                    kSchemaVersion));
  }
  try {
    RunReport r;
    r.schema_version = version;
    doc.at("context").get_to(r.context);
    doc.at("config").get_to(r.config);
    doc.at("results").get_to(r.results);
    r.passed = doc.value("passed", true);
    return r;
  } catch (const json::exception& e) {
    throw InputError(fmt::format("malformed ddpbench report: {}", e.what()));
  }
}

std::string JsonReporter::render(const RunReport& report) const {
  return to_json(report).dump(2) + "\n";
}

}  // namespace ddpbench::reports
