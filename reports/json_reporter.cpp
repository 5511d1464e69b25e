// json_reporter.cpp — see json_reporter.h. Reading a report back is json_report_reader.cpp.
#include "reports/json_reporter.h"

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
           {"scaling", c.scaling},
           {"scenario_config", c.scenario_config},
           {"scenario_yaml", c.scenario_yaml}};
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

void to_json(json& j, const PhaseRecord& p) {
  j = json{{"data_s", p.data},
           {"forward_s", p.forward},
           {"backward_s", p.backward},
           {"comm_wait_s", p.comm_wait},
           {"optimizer_s", p.optimizer}};
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
           {"bus_bandwidth_gb_s", t.bus_bandwidth_gb_s},
           {"step_time_mean_s", t.step_time_mean_s},
           {"step_time_cv", t.step_time_cv},
           {"weak_reasons", t.weak_reasons}};
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

void to_json(json& j, const DivergenceRecord& d) {
  j = json{{"stage", d.stage},
           {"step", d.step},
           {"tensor", d.tensor},
           {"error", d.error},
           {"measure", d.measure},
           {"bisect", d.bisect},
           {"bisect_detail", d.bisect_detail}};
}

void to_json(json& j, const EvaluationRecord& e) {
  j = json{{"status", e.status},
           {"skipped_reason", e.skipped_reason},
           {"dataset", e.dataset},
           {"samples", e.samples},
           {"count", e.count},
           {"padded", e.padded},
           {"accuracy", e.accuracy},
           {"mean_loss", e.mean_loss},
           {"accuracy_without_padding", e.accuracy_without_padding},
           {"mean_loss_without_padding", e.mean_loss_without_padding},
           {"summary", e.summary}};
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
           {"gradient_collectives_per_step", r.gradient_collectives_per_step},
           {"peak_device_memory_bytes", r.peak_device_memory_bytes},
           {"hosts", r.hosts},
           {"throughput", r.throughput},
           {"scaling_efficiency", r.scaling_efficiency},
           {"scaling", r.scaling},
           {"evaluation", r.evaluation}};
}

json to_json(const RunReport& report) {
  return json{{"schema_version", report.schema_version},
              {"context", report.context},
              {"config", report.config},
              {"results", report.results},
              {"passed", report.passed}};
}

std::string JsonReporter::render(const RunReport& report) const {
  return to_json(report).dump(2) + "\n";
}

}  // namespace ddpbench::reports
