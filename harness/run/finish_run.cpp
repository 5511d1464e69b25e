// finish_run.cpp — see finish_run.h.
#include "run/finish_run.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <deque>

#include "compare/ddp_agreement.h"
#include "compare/mode_comparison.h"
#include "compare/report_audit.h"
#include "errors.h"
#include "metrics/step_statistics.h"
#include "modes/common/model_state.h"
#include "modes/ddp/comm_hook.h"
#include "output/environment_block.h"
#include "output/write_reports.h"
#include "reports/verdict.h"
#include "scenarios/scenario_config.h"
#include "scenarios/training_recipe.h"
#include "training/comparison_policy.h"
#include "training/fault_detection.h"
#include "training/floor_measurement.h"

namespace ddpbench::run {
namespace {

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

// What `mode` was judged against and, when that is not plain single-device training, how far the
// mode is from it: the figure that explains why single-device training is not the verdict.
reports::ReferenceRecord reference_record(const training::ExactReference& exact,
                                          const compare::ModeTrace& single,
                                          const compare::ModeTrace& mode) {
  reports::ReferenceRecord r;
  r.name = exact.name();
  r.causes = exact.causes;
  if (exact.rule.plain()) return r;
  r.steps = static_cast<int64_t>(std::min(single.losses.size(), mode.losses.size()));
  if (r.steps > 0) {
    const double a = single.losses[static_cast<size_t>(r.steps - 1)];
    const double b = mode.losses[static_cast<size_t>(r.steps - 1)];
    r.loss_diff = std::abs(a - b);
    r.loss_rel_diff = a != 0 ? r.loss_diff / std::abs(a) : 0.0;
  }
  for (size_t i = 0; i < single.param_names.size() && i < single.final_state.size(); ++i) {
    for (const auto& [name, t] : mode.final_state) {
      if (name != single.final_state[i].first) continue;
      const at::Tensor diff = (t.to(at::kDouble) - single.final_state[i].second.to(at::kDouble));
      r.max_parameter_diff = std::max(r.max_parameter_diff, diff.abs().max().item<double>());
    }
  }
  std::vector<std::string> names;
  for (const auto& c : exact.causes) names.push_back(c.substr(0, c.find(':')));
  r.summary = fmt::format(
      "{} move{} the loss by {:.3g} ({:.2g}% of it) after {} step(s) and the parameters by up to "
      "{:.3g} against plain single-device training; the checks compare with the exact reference",
      fmt::join(names, " and "), names.size() == 1 ? "s" : "", r.loss_diff, 100 * r.loss_rel_diff,
      r.steps, r.max_parameter_diff);
  return r;
}

// Note [Rounding floor measured on the model] (compare/rounding_floor.h): measured on demand, once
// per reference rule and limit, for a comparison that failed at its fixed limits.
class FloorsOnDemand {
 public:
  FloorsOnDemand(const training::RunSetup& setup, const training::PhaseInputs* inputs)
      : setup_(setup), inputs_(setup.check_steps > 0 ? inputs : nullptr), quiet_(setup.quiet) {}

  // Null when the run cannot measure one.
  const compare::MeasuredFloors* of(const modes::single::ReferenceRule& rule,
                                    double gradient_limit) {
    if (inputs_ == nullptr || !training::can_measure_floors(setup_, rule)) return nullptr;
    for (const Measured& m : measured_) {
      if (m.rule == rule && m.limit == gradient_limit) return &m.floors;
    }
    if (!quiet_) {
      fmt::print(
          "measuring the rounding floor of the reference (a check failed at its fixed "
          "limit) ...\n");
      std::fflush(stdout);
    }
    measured_.push_back(
        {rule, gradient_limit, training::measure_floors(*inputs_, rule, gradient_limit)});
    return &measured_.back().floors;
  }

 private:
  struct Measured {
    modes::single::ReferenceRule rule;
    double limit;
    compare::MeasuredFloors floors;
  };
  const training::RunSetup& setup_;
  const training::PhaseInputs* inputs_;
  bool quiet_;
  std::deque<Measured> measured_;  // stable addresses
};

bool any_failed(const std::vector<reports::CheckRecord>& checks) {
  for (const auto& c : checks) {
    if (c.status == reports::CheckStatus::kFail) return true;
  }
  return false;
}

}  // namespace

reports::ThroughputRecord throughput_of(const training::RunSetup& setup,
                                        const training::ModeOutcome& o) {
  reports::ThroughputRecord t;
  if (o.perf_times.empty()) return t;
  const metrics::StepSummary s = metrics::summarize(o.perf_times);
  t.warmup_steps = setup.warmup_steps;
  t.timed_steps = s.steps;
  t.samples_per_step = o.perf_samples_per_step;
  // The median step, not the mean: one slow step (a page fault, a preempted rank) moves the mean
  // of a short run by its whole excess, the median not at all (Note [Weak figures]).
  t.samples_per_s = s.p50 > 0 ? o.perf_samples_per_step / s.p50 : 0.0;
  t.samples_per_s_per_device =
      t.samples_per_s / static_cast<double>(std::max<int64_t>(1, o.world_size));
  t.step_time_p50_s = s.p50;
  t.step_time_p90_s = s.p90;
  t.step_time_p99_s = s.p99;
  t.step_time_mean_s = s.mean;
  t.step_time_cv = s.cv;
  t.weak_reasons = metrics::weak_reasons(s.steps, s.cv, -1);
  t.phases = {s.phase_means.data, s.phase_means.forward, s.phase_means.backward,
              s.phase_means.comm_wait, s.phase_means.optimizer};
  if (o.mode == modes::ModeKind::kDdp) {
    t.bytes_allreduced_per_step = o.bytes_per_step;
    t.bus_bandwidth_gb_s =
        metrics::allreduce_bus_bandwidth(o.bytes_per_step, o.world_size, s.p50) / 1e9;
  }
  return t;
}

int finish_run(const training::RunSetup& setup, const runtime::ExecutionContext& context,
               const RunDescription& run, std::vector<training::ModeOutcome> outcomes,
               const std::vector<training::ReferenceOutcome>& references, output::OutputDir& out) {
  const scenarios::ScenarioSpec& spec = *setup.spec;
  reports::RunReport report;
  report.context = output::collect_context(run.argv, context);
  std::vector<std::string> mode_names;
  for (modes::ModeKind m : setup.modes) mode_names.push_back(modes::mode_name(m));
  report.config = {spec.name,
                   spec.model_name,
                   run.dataset,
                   scenarios::loss_name(spec.loss),
                   scenarios::describe_optimizer(spec.optimizer, spec.clip_grad_norm),
                   mode_names,
                   setup.steps,
                   setup.global_batch,
                   run.plan->local_batch(),
                   setup.world_size,
                   run.plan->steps_per_epoch(),
                   setup.seed,
                   context.threads(),
                   setup.dtype_name(),
                   scenarios::amp_name(setup.spec->amp),
                   setup.request.data_dir,
                   sampler_record(run.plan->sampler())};
  report.config.ddp = {modes::ddp::ddp_impl_name(setup.ddp.impl),
                       setup.ddp.reducer.limits.bucket_cap_bytes,
                       setup.ddp.reducer.limits.first_bucket_bytes,
                       modes::ddp::comm_hook_name(setup.ddp.reducer.comm_hook),
                       setup.ddp.broadcast_buffers,
                       setup.ddp.reducer.find_unused_parameters,
                       setup.sync_bn,
                       comm::backend_name(setup.backend),
                       setup.ddp.static_graph,
                       setup.ddp.gradient_as_bucket_view};
  report.config.warmup_steps = setup.warmup_steps;
  report.config.scaling = setup.strong_scaling ? "strong" : "weak";
  report.config.zero_stage = setup.has_mode(modes::ModeKind::kZero) ? setup.zero_stage : 0;
  report.config.scenario_config = spec.configured_by;
  report.config.scenario_yaml = scenarios::scenario_yaml(spec);
  report.config.accumulation_steps = setup.accumulation_steps;
  report.config.no_sync = setup.no_sync;
  report.config.comparison = setup.lockstep ? "lockstep" : "free-running";
  report.config.gradient_check = run.grad_record;
  if (setup.fault) {
    const modes::FaultSpec& f = *setup.fault;
    report.config.inject_fault =
        fmt::format("{}:rank={},step={},eps={:g}{}", modes::fault_name(f.kind), f.rank, f.step,
                    f.eps, f.tensor.empty() ? "" : ",tensor=" + f.tensor);
  }
  report.config.first_step = setup.first_step();
  report.config.eval_size = setup.eval_size;
  report.config.model_file = spec.model_file;
  report.config.model_notes = spec.model_notes;

  const training::ModeOutcome* single = nullptr;
  const training::ModeOutcome* ddp = nullptr;
  for (const auto& o : outcomes) {
    if (o.mode == modes::ModeKind::kSingle) single = &o;
    if (o.mode == modes::ModeKind::kDdp) ddp = &o;
  }
  bool wrote_checkpoints = false;
  FloorsOnDemand floors(setup, run.inputs);
  const double single_throughput =
      single != nullptr ? throughput_of(setup, *single).samples_per_s : 0.0;
  for (auto& o : outcomes) {
    reports::ModeResult r;
    r.mode = o.mode;  // modes::ModeKind is reports::Mode
    r.world_size = o.world_size;
    r.losses = o.trace.losses;
    r.loss_scales = o.trace.loss_scales;
    for (size_t s = 0; s < o.trace.skipped.size(); ++s) {
      if (o.trace.skipped[s])
        r.skipped_steps.push_back(o.trace.first_step + static_cast<int64_t>(s));
    }
    for (const auto& t : o.check_times) r.step_seconds.push_back(t.total);
    r.throughput = throughput_of(setup, o);
    // In a lockstep run (single present, below float64) this is the state after the last lockstep
    // step, not a free-running trajectory (README, "The DDP engines").
    r.state_file = fmt::format("state_{}.pt", modes::mode_name(o.mode));
    r.backend = o.backend;
    r.bytes_per_step = o.bytes_per_step;
    r.buckets = o.buckets;
    r.gradient_collectives_per_step = o.gradient_collectives_per_step;
    r.peak_device_memory_bytes = o.peak_device_memory_bytes;
    r.hosts = o.hosts;
    r.evaluation = o.evaluation;
    r.amp_vs_float32 = o.amp_vs_float32;
    r.memory = o.memory;
    if (single != nullptr && &o != single && single->throughput_defined() && o.world_size > 0) {
      r.scaling = setup.strong_scaling ? "strong" : "weak";
      r.scaling_efficiency =
          metrics::scaling_efficiency(r.throughput.samples_per_s, o.world_size, single_throughput);
      r.throughput.weak_reasons = metrics::weak_reasons(
          r.throughput.timed_steps, r.throughput.step_time_cv, r.scaling_efficiency);
    }
    if (single != nullptr && &o != single && !o.trace.losses.empty() &&
        !single->trace.losses.empty()) {
      const training::ExactReference exact =
          training::exact_reference_for(setup, o.mode, *run.model);
      const training::ModeOutcome* ref = single;
      for (const auto& candidate : references) {
        if (!exact.rule.plain() && candidate.rule == exact.rule) ref = &candidate.outcome;
      }
      r.gradient_check = run.grad_record;
      const compare::ComparisonPolicy policy =
          training::comparison_policy(setup, o.mode, run.grad_record);
      compare::ModeComparison judged = compare::compare_modes(ref->trace, o.trace, policy);
      std::string floor_how;
      if (any_failed(judged.checks)) {
        if (const auto* f = floors.of(exact.rule, policy.gradient_tolerance)) {
          if (!f->empty()) judged = compare::compare_modes(ref->trace, o.trace, policy, f);
          floor_how = f->how;
        }
      }
      r.checks = std::move(judged.checks);
      r.first_divergence = std::move(judged.first_divergence);
      r.reference = reference_record(exact, single->trace, o.trace);
      r.reference.comparison = o.trace.comparison;
      r.reference.floor = floor_how;
      r.reference.losses = ref->trace.losses;
      if (ref != single) {
        r.reference.state_file = fmt::format("state_reference_{}.pt", modes::mode_name(o.mode));
        const std::vector<char> state = modes::pickle_state(ref->trace.final_state);
        out.stage(r.reference.state_file, std::string_view(state.data(), state.size()));
      }
    }
    const modes::single::ReferenceRule zero_rule =
        training::exact_reference_for(setup, o.mode, *run.model).rule;
    if (o.mode == modes::ModeKind::kZero && ddp != nullptr && !o.trace.losses.empty() &&
        !ddp->trace.losses.empty() &&
        zero_rule == training::exact_reference_for(setup, modes::ModeKind::kDdp, *run.model).rule) {
      // Judged against ddp itself too (issue 35), after the checks against the reference.
      const compare::AgreementRule rule = training::ddp_agreement_rule(setup, run.grad_record);
      compare::ModeComparison judged = compare::ddp_agreement(ddp->trace, o.trace, rule);
      if (any_failed(judged.checks) && !rule.bitwise) {
        const double limit =
            training::comparison_policy(setup, o.mode, run.grad_record).gradient_tolerance;
        if (const auto* f = floors.of(zero_rule, limit)) {
          if (!f->empty()) judged = compare::ddp_agreement(ddp->trace, o.trace, rule, f);
          if (r.reference.floor.empty()) r.reference.floor = f->how;
        }
      }
      r.checks.push_back(judged.checks.front());
      if (r.first_divergence.stage == reports::Stage::kNone) {
        r.first_divergence = std::move(judged.first_divergence);
      }
    }
    for (const auto& c : o.extra_checks) {
      // The evaluation pass comes after training: a failing one is no divergence of training.
      if (c.name != reports::Stage::kEvaluation) compare::offer_ranks_check(c, r.first_divergence);
      r.checks.push_back(c);
    }
    // An injected fault that no check caught must not pass (training/fault_detection.h).
    if (auto c = training::undetected_fault_check(setup, o.mode, r.checks)) r.checks.push_back(*c);
    if (o.trace.final_state.empty()) {
      r.state_file.clear();  // --perf-only: no checked trajectory, no final state
    } else {
      const std::vector<char> state = modes::pickle_state(o.trace.final_state);
      out.stage(r.state_file, std::string_view(state.data(), state.size()));
    }
    // --checkpoint-every: committed with the report, so a failed run leaves none half-written.
    for (const training::SavedCheckpoint& c : o.checkpoints) {
      out.stage(fmt::format("checkpoint_{}_step{}.pt", modes::mode_name(o.mode), c.step),
                std::string_view(c.bytes.data(), c.bytes.size()));
      wrote_checkpoints = true;
    }
    report.results.push_back(std::move(r));
  }

  // The verdict is the one function report and gate recompute (reports/verdict.h).
  report.verdict = reports::run_verdict(report);
  if (report.verdict == reports::Verdict::kFail && setup.bisect) {
    if (run.bisect) {
      run.bisect(report);
      // Note [Bisect's answer counts] (reports/verdict.h): the float64 numbers may make float32
      // failures rounding.
      for (reports::ModeResult& r : report.results) {
        for (reports::CheckRecord& c : r.checks)
          c.status = reports::check_status(c, r.first_divergence);
      }
      report.verdict = reports::run_verdict(report);
    } else {
      fmt::print(stderr,
                 "ddpbench: --bisect runs from the launching ddpbench process only; under an "
                 "external launcher, re-run with --dtype float64 instead\n");
    }
  }
  // `report` and `gate` refuse a report its configuration contradicts (Note [What a report's
  // configuration implies]); one ddpbench wrote itself must never be such: a disagreement is
  // ddpbench's own bug, and no report is written.
  try {
    compare::audit_report(report);
  } catch (const InputError& e) {
    throw std::logic_error(
        fmt::format("ddpbench's own report fails the audit `report` applies: {}", e.what()));
  }
  output::write_reports(report, out,
                        wrote_checkpoints ? ", state files and checkpoints" : " and state files");
  return report.verdict == reports::Verdict::kFail ? kExitCheckFailed : kExitOk;
}

}  // namespace ddpbench::run
