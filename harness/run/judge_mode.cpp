// judge_mode.cpp — see judge_mode.h.
#include "run/judge_mode.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <deque>

#include "compare/ddp_agreement.h"
#include "compare/mode_comparison.h"
#include "compare/throughput_spread.h"
#include "metrics/step_statistics.h"
#include "modes/common/model_state.h"
#include "training/comparison_policy.h"
#include "training/exact_reference.h"
#include "training/fault_detection.h"
#include "training/floor_measurement.h"

namespace ddpbench::run {
namespace {

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

bool any_failed(const std::vector<reports::CheckRecord>& checks) {
  for (const auto& c : checks) {
    if (c.status == reports::CheckStatus::kFail) return true;
  }
  return false;
}

}  // namespace

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

reports::ThroughputRecord throughput_of(const training::RunSetup& setup,
                                        const training::ModeOutcome& o) {
  reports::ThroughputRecord t;
  if (o.perf_times.empty()) return t;
  // Every repeat's timed steps (repeat 1: this run's own processes); the phase means are repeat
  // 1's, and every other figure is computed from the stored samples by the function `report` and
  // `gate` recompute it with.
  t.repeats.emplace_back();
  for (const auto& step : o.perf_times) t.repeats.back().step_times_s.push_back(step.total);
  t.repeats.back().runner_load = o.runner_load;
  t.repeats.insert(t.repeats.end(), o.more_repeats.begin(), o.more_repeats.end());
  t.ranks = o.rank_timings;
  const metrics::StepSummary first = metrics::summarize(o.perf_times);
  t.warmup_steps = setup.warmup_steps;
  t.samples_per_step = o.perf_samples_per_step;
  t.phases = {first.phase_means.data, first.phase_means.forward, first.phase_means.backward,
              first.phase_means.comm_wait, first.phase_means.optimizer};
  if (o.mode == modes::ModeKind::kDdp) t.bytes_allreduced_per_step = o.bytes_per_step;
  compare::derive_figures(t, o.world_size, -1);
  return t;
}

ModeJudge::ModeJudge(const training::RunSetup& setup, const RunDescription& run,
                     const std::vector<training::ModeOutcome>& outcomes,
                     const std::vector<training::ReferenceOutcome>& references)
    : setup_(setup),
      run_(run),
      references_(references),
      floors_(std::make_unique<FloorsOnDemand>(setup, run.inputs)) {
  for (const auto& o : outcomes) {
    if (o.mode == modes::ModeKind::kSingle) single_ = &o;
    if (o.mode == modes::ModeKind::kDdp) ddp_ = &o;
  }
  if (single_ != nullptr && single_->throughput_defined()) {
    single_samples_per_s_ = throughput_of(setup, *single_).samples_per_s;
  }
}

ModeJudge::~ModeJudge() = default;

reports::ModeResult ModeJudge::figures(const training::ModeOutcome& o) const {
  reports::ModeResult r;
  r.mode = o.mode;  // modes::ModeKind is reports::Mode
  r.world_size = o.world_size;
  r.losses = o.trace.losses;
  r.loss_scales = o.trace.loss_scales;
  for (size_t s = 0; s < o.trace.skipped.size(); ++s) {
    if (o.trace.skipped[s]) r.skipped_steps.push_back(o.trace.first_step + static_cast<int64_t>(s));
  }
  for (const auto& t : o.check_times) r.step_seconds.push_back(t.total);
  r.throughput = throughput_of(setup_, o);
  // In a lockstep run (single present, below float64) this is the state after the last lockstep
  // step, not a free-running trajectory (docs/DDP_ENGINES.md).
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
  r.collectives = o.collectives;
  if (single_samples_per_s_ && &o != single_ && o.world_size > 0) {
    r.scaling = setup_.strong_scaling ? "strong" : "weak";
    r.scaling_efficiency = metrics::scaling_efficiency(r.throughput.samples_per_s, o.world_size,
                                                       *single_samples_per_s_);
    compare::derive_figures(r.throughput, o.world_size, r.scaling_efficiency);
  }
  return r;
}

void ModeJudge::against_reference(const training::ModeOutcome& o, reports::ModeResult& r,
                                  output::OutputDir& out) {
  if (single_ == nullptr || &o == single_ || o.trace.losses.empty() ||
      single_->trace.losses.empty()) {
    return;
  }
  const training::ExactReference exact = training::exact_reference_for(setup_, o.mode, *run_.model);
  const training::ModeOutcome* ref = single_;
  for (const auto& candidate : references_) {
    if (!exact.rule.plain() && candidate.rule == exact.rule) ref = &candidate.outcome;
  }
  r.gradient_check = run_.grad_record;
  const compare::ComparisonPolicy policy =
      training::comparison_policy(setup_, o.mode, run_.grad_record);
  compare::ModeComparison judged = compare::compare_modes(ref->trace, o.trace, policy);
  std::string floor_how;
  if (any_failed(judged.checks)) {
    if (const auto* f = floors_->of(exact.rule, policy.gradient_tolerance)) {
      if (!f->empty()) judged = compare::compare_modes(ref->trace, o.trace, policy, f);
      floor_how = f->how;
    }
  }
  r.checks = std::move(judged.checks);
  r.first_divergence = std::move(judged.first_divergence);
  r.reference = reference_record(exact, single_->trace, o.trace);
  r.reference.comparison = o.trace.comparison;
  r.reference.floor = floor_how;
  r.reference.losses = ref->trace.losses;
  if (ref != single_) {
    r.reference.state_file = fmt::format("state_reference_{}.pt", modes::mode_name(o.mode));
    const std::vector<char> state = modes::pickle_state(ref->trace.final_state);
    out.stage(r.reference.state_file, std::string_view(state.data(), state.size()));
  }
}

// Judged against ddp itself too (issue 35), after the checks against the reference, where both
// were judged against the same reference.
void ModeJudge::against_ddp(const training::ModeOutcome& o, reports::ModeResult& r) {
  if (o.mode != modes::ModeKind::kZero || ddp_ == nullptr || o.trace.losses.empty() ||
      ddp_->trace.losses.empty()) {
    return;
  }
  const modes::single::ReferenceRule zero_rule =
      training::exact_reference_for(setup_, o.mode, *run_.model).rule;
  if (!(zero_rule ==
        training::exact_reference_for(setup_, modes::ModeKind::kDdp, *run_.model).rule)) {
    return;
  }
  const compare::AgreementRule rule = training::ddp_agreement_rule(setup_, run_.grad_record);
  compare::ModeComparison judged = compare::ddp_agreement(ddp_->trace, o.trace, rule);
  if (any_failed(judged.checks) && !rule.bitwise) {
    const double limit =
        training::comparison_policy(setup_, o.mode, run_.grad_record).gradient_tolerance;
    if (const auto* f = floors_->of(zero_rule, limit)) {
      if (!f->empty()) judged = compare::ddp_agreement(ddp_->trace, o.trace, rule, f);
      if (r.reference.floor.empty()) r.reference.floor = f->how;
    }
  }
  r.checks.push_back(judged.checks.front());
  if (r.first_divergence.stage == reports::Stage::kNone) {
    r.first_divergence = std::move(judged.first_divergence);
  }
}

reports::ModeResult ModeJudge::judge(const training::ModeOutcome& o, output::OutputDir& out) {
  reports::ModeResult r = figures(o);
  against_reference(o, r, out);
  against_ddp(o, r);
  for (const auto& c : o.extra_checks) {
    // The evaluation pass comes after training: a failing one is no divergence of training.
    if (c.name != reports::Stage::kEvaluation) compare::offer_ranks_check(c, r.first_divergence);
    r.checks.push_back(c);
  }
  // An injected fault that no check caught must not pass (training/fault_detection.h).
  if (auto c = training::undetected_fault_check(setup_, o.mode, r.checks)) r.checks.push_back(*c);
  return r;
}

}  // namespace ddpbench::run
