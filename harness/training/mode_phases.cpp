// mode_phases.cpp — see mode_phases.h. The per-rank modes' phases are rank_phases.cpp's.
#include "training/mode_phases.h"

#include <torch/torch.h>

#include "modes/data_parallel/data_parallel_path.h"
#include "modes/single/single_path.h"
#include "training/evaluation.h"
#include "training/parameter_travel.h"
#include "training/phase_steps.h"
#include "training/progress_line.h"

namespace ddpbench::training {
namespace {

using modes::ModeKind;

// What a check phase does besides training: a mode keeps its checkpoints, is evaluated, has its
// --amp error measured and is traced; an exact reference does none of it.
struct CheckPhaseUse {
  bool keep_checkpoints = false;
  bool evaluate = false;
  bool measure_amp = false;
  bool trace = false;
};
constexpr CheckPhaseUse kModeCheck{true, true, true, true};
constexpr CheckPhaseUse kReferenceCheck{};

// The check phase of a local path: a fresh model trained on the run's plan, every step checked;
// then, for a mode (not an exact reference), the evaluation pass of the trained model.
template <typename MakePath>
void run_check_phase(const PhaseInputs& in, ModeKind mode, const MakePath& make_path,
                     const std::string& name, ModeOutcome& o, const CheckPhaseUse& use) {
  scenarios::ScenarioInstance instance = fresh_instance(in);
  const auto path = make_path(instance);
  ProgressLine progress(in.setup.progress, name + " (check)", in.setup.check_steps);
  modes::TrainOptions options = accumulating(check_options(in), in.setup, mode);
  options.overflow_step = in.setup.overflow_step();
  options.on_step = [&progress](int64_t step, double loss) { progress.update(step + 1, loss); };
  if (use.keep_checkpoints) options.after_step = checkpoint_keeper(in, mode, o);
  // A free-running reference's parameter travel (Note [Parameters judged by what moved them]).
  ParameterTravel travel;
  if (mode == ModeKind::kSingle && !in.setup.lockstep) {
    options.before_step = [&travel](int64_t, torch::nn::Module& m, torch::optim::Optimizer&) {
      travel.before_step(m);
    };
    options.after_step = [after = std::move(options.after_step), &travel](
                             int64_t step, torch::nn::Module& m, torch::optim::Optimizer& opt,
                             const scenarios::GradScaler* scaler) {
      travel.after_step(m);
      if (after) after(step, m, opt, scaler);
    };
  }
  const std::unique_ptr<modes::StepTrace> trace = use.trace ? traced(in, options) : nullptr;
  keep_check(o, train_checked(in, mode, *path, options, nullptr, use.measure_amp, o),
             path->module(), options.first_step);
  if (trace) keep_trace(o, *trace);
  o.trace.parameter_travel = travel.finish();
  if (use.evaluate) {
    evaluate_local_mode(in.setup, in.context, *path, mode == ModeKind::kDp, o.evaluation,
                        o.extra_checks);
  }
}

}  // namespace

modes::GradRecordKind resolve_grad_record(const RunSetup& setup, const torch::nn::Module& model) {
  if (setup.grad_check) return *setup.grad_check;
  int64_t elements = 0;
  for (const auto& p : model.parameters()) elements += p.numel();
  return modes::choose_grad_record(elements);
}

ModeOutcome run_local_mode(const PhaseInputs& in, ModeKind mode) {
  const RunSetup& s = in.setup;
  // Faults belong to the check phase; only dpbuffers concerns a local mode (dp).
  std::optional<modes::FaultSpec> fault;
  if (s.fault && s.fault->kind == modes::FaultKind::kDpBuffers) fault = s.fault;
  auto make_path = [&](scenarios::ScenarioInstance& instance) {
    return mode == ModeKind::kSingle
               ? modes::single::make_single_path(*s.spec, instance, in.context)
               : modes::data_parallel::make_data_parallel_path(*s.spec, instance, s.world_size,
                                                               in.context, fault);
  };
  ModeOutcome o;
  o.mode = mode;
  o.world_size = mode == ModeKind::kSingle ? 1 : s.world_size;
  const std::string name = modes::mode_name(mode);
  in.context.reset_peak_memory(o.world_size);
  if (s.check_steps > 0) {
    run_check_phase(in, mode, make_path, name, o, kModeCheck);
  }
  if (s.perf_steps > 0) {
    // single is the scaling baseline: one device with the per-device batch of the K-rank run
    // (weak scaling) or with the whole global batch (strong scaling).
    const int64_t batch = mode != ModeKind::kSingle ? s.global_batch
                          : s.strong_scaling        ? s.global_batch
                                                    : s.global_batch / s.world_size;
    const data::GlobalBatchPlan plan =
        mode == ModeKind::kSingle ? make_plan(s, *in.dataset, 1, batch) : in.plan;
    fault.reset();
    scenarios::ScenarioInstance instance = fresh_instance(in);
    const auto path = make_path(instance);
    modes::TrainOptions options = accumulating(perf_options(in), s, mode);
    ProgressLine progress(s.progress, name + " (perf)", options.steps);
    options.on_step = [&progress](int64_t step, double loss) { progress.update(step + 1, loss); };
    o.perf_times =
        timed_part(modes::train(*path, train_inputs(in, plan), options).step_times, s.warmup_steps);
    o.perf_samples_per_step = plan.mean_samples_per_step(s.warmup_steps, s.perf_steps);
  }
  o.peak_device_memory_bytes = in.context.peak_memory_bytes(o.world_size);
  return o;
}

ModeOutcome run_reference(const PhaseInputs& in, const modes::single::ReferenceRule& rule) {
  ModeOutcome o;
  o.mode = ModeKind::kSingle;
  o.world_size = 1;
  auto make_path = [&](scenarios::ScenarioInstance& instance) {
    return modes::single::make_single_path(*in.setup.spec, instance, in.context, rule);
  };
  run_check_phase(in, ModeKind::kSingle, make_path, "reference", o, kReferenceCheck);
  return o;
}

}  // namespace ddpbench::training
