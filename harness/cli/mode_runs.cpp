// mode_runs.cpp — see mode_runs.h.
#include "cli/mode_runs.h"

#include <torch/torch.h>

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

ModeOutcome run_single_mode(const RunSetup& setup, scenarios::ScenarioInstance& instance,
                            const data::GlobalBatchPlan& plan, modes::GradRecordKind kind) {
  ModeOutcome o;
  o.mode = "single";
  o.world_size = 1;
  modes::SingleTrainOptions options{setup.steps, setup.dtype};
  options.after_backward = [&o, kind](int64_t, const torch::nn::Module& m) {
    o.trace.gradients.push_back(modes::record_gradients(m, kind));
  };
  modes::SingleTrainResult r = modes::train_single(*setup.spec, instance, plan, options);
  o.trace.losses = std::move(r.losses);
  o.trace.final_state = std::move(r.final_state);
  o.trace.param_names = parameter_names(*instance.model.ptr());
  o.step_seconds = std::move(r.step_seconds);
  return o;
}

ModeOutcome run_dp_mode(const RunSetup& setup, scenarios::ScenarioInstance& instance,
                        const data::GlobalBatchPlan& plan, modes::GradRecordKind kind) {
  ModeOutcome o;
  o.mode = "dp";
  o.world_size = setup.world_size;
  modes::data_parallel::DpTrainOptions options{setup.steps, setup.dtype};
  options.after_reduce = [&o, kind](int64_t, const torch::nn::Module& m) {
    o.trace.gradients.push_back(modes::record_gradients(m, kind));
  };
  modes::data_parallel::DpTrainResult r =
      modes::data_parallel::train_data_parallel(*setup.spec, instance, plan, options);
  o.trace.losses = std::move(r.losses);
  o.trace.final_state = std::move(r.final_state);
  o.trace.param_names = parameter_names(*instance.model.ptr());
  o.step_seconds = std::move(r.step_seconds);
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
  for (const auto& t : result.step_timings) o.step_seconds.push_back(t.total);
  o.bytes_per_step = result.bytes_per_step;
  o.buckets = result.num_buckets;
  o.extra_checks.push_back(compare::rank_agreement_check(
      result.disagreement_step, result.disagreement_rank, result.disagreement_tensor));
  return o;
}

}  // namespace ddpbench::cli
