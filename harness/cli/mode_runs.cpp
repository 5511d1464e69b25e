// mode_runs.cpp — see mode_runs.h.
#include "cli/mode_runs.h"

#include <torch/torch.h>

#include "metrics/progress_line.h"
#include "modes/data_parallel/dp_trainer.h"
#include "modes/single/single_trainer.h"

namespace ddpbench::cli {

modes::GradRecordKind resolve_grad_record(const RunSetup& setup, const torch::nn::Module& model) {
  if (setup.grad_check == "full") return modes::GradRecordKind::kFull;
  if (setup.grad_check == "fingerprint") return modes::GradRecordKind::kFingerprint;
  int64_t elements = 0;
  for (const auto& p : model.parameters()) elements += p.numel();
  return modes::choose_grad_record(elements);
}

std::vector<std::string> parameter_names(const torch::nn::Module& model) {
  std::vector<std::string> names;
  for (const auto& p : model.named_parameters()) names.push_back(p.key());
  return names;
}

namespace {

// The timed steps of a perf run: everything after its warm-up. (Perf runs use a freshly built
// model so the checked trajectory is not disturbed.)
std::vector<metrics::PhaseTimes> timed_part(std::vector<metrics::PhaseTimes> all, int64_t warmup) {
  all.erase(all.begin(), all.begin() + std::min<int64_t>(warmup, static_cast<int64_t>(all.size())));
  return all;
}

}  // namespace

ModeOutcome run_single_mode(const RunSetup& setup, scenarios::ScenarioInstance& instance,
                            const data::GlobalBatchPlan& plan, modes::GradRecordKind kind) {
  ModeOutcome o;
  o.mode = "single";
  o.world_size = 1;
  if (setup.check_steps > 0) {
    metrics::ProgressLine progress(setup.progress, "single (check)", setup.check_steps);
    modes::SingleTrainOptions options{setup.check_steps, setup.dtype};
    options.on_step = [&progress](int64_t step, double loss) { progress.update(step + 1, loss); };
    options.after_backward = [&o, kind](int64_t, const torch::nn::Module& m) {
      o.trace.gradients.push_back(modes::record_gradients(m, kind));
    };
    modes::SingleTrainResult r = modes::train_single(*setup.spec, instance, plan, options);
    o.trace.losses = std::move(r.losses);
    o.trace.final_state = std::move(r.final_state);
    o.trace.param_names = parameter_names(*instance.model.ptr());
    o.check_times = std::move(r.step_times);
  }
  if (setup.perf_steps > 0) {
    // The scaling baseline: one device with the per-device batch of the K-rank run (weak
    // scaling) or with the whole global batch (strong scaling).
    const int64_t batch =
        setup.strong_scaling ? setup.global_batch : setup.global_batch / setup.world_size;
    scenarios::ScenarioInstance fresh = scenarios::instantiate(*setup.spec, setup.request);
    const data::GlobalBatchPlan perf_plan = make_plan(setup, *fresh.dataset, 1, batch);
    modes::SingleTrainOptions options{setup.warmup_steps + setup.perf_steps, setup.dtype};
    metrics::ProgressLine progress(setup.progress, "single (perf)", options.steps);
    options.on_step = [&progress](int64_t step, double loss) { progress.update(step + 1, loss); };
    o.perf_times = timed_part(
        modes::train_single(*setup.spec, fresh, perf_plan, options).step_times, setup.warmup_steps);
    o.perf_samples_per_step = batch;
  }
  return o;
}

ModeOutcome run_dp_mode(const RunSetup& setup, scenarios::ScenarioInstance& instance,
                        const data::GlobalBatchPlan& plan, modes::GradRecordKind kind) {
  ModeOutcome o;
  o.mode = "dp";
  o.world_size = setup.world_size;
  if (setup.check_steps > 0) {
    metrics::ProgressLine progress(setup.progress, "dp (check)", setup.check_steps);
    modes::data_parallel::DpTrainOptions options{setup.check_steps, setup.dtype};
    options.on_step = [&progress](int64_t step, double loss) { progress.update(step + 1, loss); };
    options.after_reduce = [&o, kind](int64_t, const torch::nn::Module& m) {
      o.trace.gradients.push_back(modes::record_gradients(m, kind));
    };
    modes::data_parallel::DpTrainResult r =
        modes::data_parallel::train_data_parallel(*setup.spec, instance, plan, options);
    o.trace.losses = std::move(r.losses);
    o.trace.final_state = std::move(r.final_state);
    o.trace.param_names = parameter_names(*instance.model.ptr());
    o.check_times = std::move(r.step_times);
  }
  if (setup.perf_steps > 0) {
    scenarios::ScenarioInstance fresh = scenarios::instantiate(*setup.spec, setup.request);
    modes::data_parallel::DpTrainOptions options{setup.warmup_steps + setup.perf_steps,
                                                 setup.dtype};
    metrics::ProgressLine progress(setup.progress, "dp (perf)", options.steps);
    options.on_step = [&progress](int64_t step, double loss) { progress.update(step + 1, loss); };
    o.perf_times = timed_part(
        modes::data_parallel::train_data_parallel(*setup.spec, fresh, plan, options).step_times,
        setup.warmup_steps);
    o.perf_samples_per_step = setup.global_batch;
  }
  return o;
}

ModeOutcome ddp_outcome(const RunSetup& setup, modes::ddp::DdpWorkerResult result,
                        std::vector<std::string> param_names) {
  ModeOutcome o;
  o.mode = "ddp";
  o.world_size = setup.world_size;
  o.backend = setup.backend;
  o.trace.losses = std::move(result.losses);
  o.trace.gradients = std::move(result.gradients);
  o.trace.final_state = std::move(result.final_state);
  o.trace.param_names = std::move(param_names);
  o.check_times = std::move(result.step_timings);
  o.perf_times = std::move(result.perf_timings);
  o.perf_samples_per_step = setup.global_batch;
  o.bytes_per_step = result.bytes_per_step;
  o.buckets = result.num_buckets;
  if (setup.check_steps == 0) {
    o.trace.final_state.clear();  // --perf-only: nothing was checked
  } else {
    o.extra_checks.push_back(compare::rank_agreement_check(
        result.disagreement_step, result.disagreement_rank, result.disagreement_tensor));
  }
  return o;
}

}  // namespace ddpbench::cli
