// finish_run.cpp — see finish_run.h.
#include "run/finish_run.h"

#include <fmt/format.h>

#include "compare/mode_comparison.h"
#include "errors.h"
#include "metrics/step_statistics.h"
#include "modes/common/model_state.h"
#include "run/environment_block.h"
#include "run/write_reports.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::run {
namespace {

std::string describe_optimizer(const scenarios::OptimizerSpec& o) {
  std::string s = fmt::format("SGD(lr={}", o.lr);
  if (o.momentum != 0) s += fmt::format(", momentum={}", o.momentum);
  if (o.dampening != 0) s += fmt::format(", dampening={}", o.dampening);
  if (o.nesterov) s += ", nesterov=True";
  if (o.weight_decay != 0) s += fmt::format(", weight_decay={}", o.weight_decay);
  return s + ")";
}

compare::ComparisonPolicy policy_for(const RunSetup& setup, modes::ModeKind mode,
                                     const std::string& grad_record) {
  const scenarios::Tolerances& t = setup.spec->tolerances;
  const bool f64 = setup.context.dtype == at::kDouble;
  const scenarios::Tolerance& state = f64 ? t.float64 : t.float32;
  compare::ComparisonPolicy p;
  p.state = {state.rtol, state.atol};
  p.gradient_tolerance = f64 ? t.gradient_float64 : t.gradient_float32;
  p.gradient_fingerprints = grad_record == "fingerprint";
  // Compression hooks round every gradient to the wire format: judge gradients at that
  // precision (8 ulps of fp16 / bf16), or the check would only measure the compression.
  // Parameters accumulate those roundings step after step: widen them the same way.
  if (mode == modes::ModeKind::kDdp &&
      setup.ddp.reducer.comm_hook != modes::ddp::CommHookKind::kAllreduce) {
    const double wire_eps =
        setup.ddp.reducer.comm_hook == modes::ddp::CommHookKind::kFp16Compress ? 0x1p-11 : 0x1p-8;
    p.gradient_tolerance = std::max(p.gradient_tolerance, 8 * wire_eps);
    p.state.rtol = std::max(p.state.rtol, 8 * wire_eps);
    p.state.atol = std::max(p.state.atol, 0.08 * wire_eps);
  }
  for (const auto& d : setup.spec->divergences) {
    if (d.only_without_sync_bn && setup.sync_bn) continue;
    if (d.mode == modes::mode_name(mode)) p.divergences.push_back({d.tensor_pattern, d.reason});
  }
  return p;
}

reports::SamplerRecord sampler_record(const data::DistributedSampler& sampler) {
  const auto& o = sampler.options();
  reports::SamplerRecord r{o.dataset_size,
                           o.num_replicas,
                           o.shuffle,
                           o.drop_last,
                           o.seed,
                           sampler.num_samples(),
                           sampler.total_size(),
                           sampler.padded_count(),
                           sampler.dropped_count()};
  data::DistributedSampler epoch0 = sampler;
  epoch0.set_epoch(0);
  const auto ranks = epoch0.all_indices();
  for (size_t rank = 0; rank < ranks.size(); ++rank) {
    const auto n = std::min<size_t>(ranks[rank].size(), reports::kPartitionPreview);
    r.preview.emplace_back(ranks[rank].begin(), ranks[rank].begin() + static_cast<int64_t>(n));
    std::vector<bool> pad;
    for (size_t j = 0; j < n; ++j) {
      pad.push_back(epoch0.is_padding(static_cast<int64_t>(rank), static_cast<int64_t>(j)));
    }
    r.preview_padding.push_back(std::move(pad));
  }
  return r;
}

}  // namespace

reports::ThroughputRecord throughput_of(const RunSetup& setup, const ModeOutcome& o) {
  reports::ThroughputRecord t;
  if (o.perf_times.empty()) return t;
  const metrics::StepSummary s = metrics::summarize(o.perf_times);
  t.warmup_steps = setup.warmup_steps;
  t.timed_steps = s.steps;
  t.samples_per_step = o.perf_samples_per_step;
  t.samples_per_s = s.mean > 0 ? static_cast<double>(o.perf_samples_per_step) / s.mean : 0.0;
  t.samples_per_s_per_device =
      t.samples_per_s / static_cast<double>(std::max<int64_t>(1, o.world_size));
  t.step_time_p50_s = s.p50;
  t.step_time_p90_s = s.p90;
  t.step_time_p99_s = s.p99;
  t.phases = {s.phase_means.data, s.phase_means.forward, s.phase_means.backward,
              s.phase_means.comm_wait, s.phase_means.optimizer};
  if (o.mode == modes::ModeKind::kDdp) {
    t.bytes_allreduced_per_step = o.bytes_per_step;
    t.bus_bandwidth_gb_s =
        metrics::allreduce_bus_bandwidth(o.bytes_per_step, o.world_size, s.mean) / 1e9;
  }
  return t;
}

int finish_run(const RunSetup& setup, const runtime::ExecutionContext& context,
               const RunDescription& run, std::vector<ModeOutcome> outcomes, OutputDir& out) {
  const scenarios::ScenarioSpec& spec = *setup.spec;
  reports::RunReport report;
  report.context = collect_context(run.argv, context.gpus());
  std::vector<std::string> mode_names;
  for (modes::ModeKind m : setup.modes) mode_names.push_back(modes::mode_name(m));
  report.config = {spec.name,
                   spec.model_name,
                   run.dataset,
                   scenarios::loss_name(spec.loss),
                   describe_optimizer(spec.optimizer),
                   mode_names,
                   setup.steps,
                   setup.global_batch,
                   run.plan->local_batch(),
                   setup.world_size,
                   run.plan->steps_per_epoch(),
                   setup.seed,
                   context.threads(),
                   setup.dtype_name(),
                   setup.request.data_dir,
                   sampler_record(run.plan->sampler())};

  const ModeOutcome* single = nullptr;
  for (const auto& o : outcomes) {
    if (o.mode == modes::ModeKind::kSingle) single = &o;
  }
  const double single_throughput =
      single != nullptr ? throughput_of(setup, *single).samples_per_s : 0.0;
  for (auto& o : outcomes) {
    reports::ModeResult r;
    r.mode = modes::mode_name(o.mode);
    r.world_size = o.world_size;
    r.losses = o.trace.losses;
    for (const auto& t : o.check_times) r.step_seconds.push_back(t.total);
    r.throughput = throughput_of(setup, o);
    r.state_file = fmt::format("state_{}.pt", modes::mode_name(o.mode));
    r.backend = o.backend;
    r.bytes_per_step = o.bytes_per_step;
    r.buckets = o.buckets;
    if (single != nullptr && &o != single && single->throughput_defined() && o.world_size > 0) {
      r.scaling = setup.strong_scaling ? "strong" : "weak";
      r.scaling_efficiency =
          metrics::scaling_efficiency(r.throughput.samples_per_s, o.world_size, single_throughput);
    }
    if (single != nullptr && &o != single && !o.trace.losses.empty() &&
        !single->trace.losses.empty()) {
      r.gradient_check = run.grad_record;
      r.checks = compare::compare_modes(single->trace, o.trace,
                                        policy_for(setup, o.mode, run.grad_record));
    }
    r.checks.insert(r.checks.end(), o.extra_checks.begin(), o.extra_checks.end());
    for (const auto& c : r.checks) report.passed = report.passed && c.status != "fail";
    if (o.trace.final_state.empty()) {
      r.state_file.clear();  // --perf-only: no checked trajectory, no final state
    } else {
      const std::vector<char> state = modes::pickle_state(o.trace.final_state);
      out.stage(r.state_file, std::string_view(state.data(), state.size()));
    }
    report.results.push_back(std::move(r));
  }

  write_reports(report, out, " and state files");
  return report.passed ? kExitOk : kExitCheckFailed;
}

}  // namespace ddpbench::run
