// phase_steps.cpp — see phase_steps.h.
#include "training/phase_steps.h"

#include "checkpoint/checkpoint.h"
#include "training/float32_shadow.h"
#include "training/lockstep.h"

namespace ddpbench::training {

using modes::ModeKind;

scenarios::ScenarioInstance fresh_instance(const PhaseInputs& in) {
  return scenarios::instantiate_model(*in.setup.spec, in.setup.request, in.dataset);
}

modes::TrainInputs train_inputs(const PhaseInputs& in, const data::GlobalBatchPlan& plan) {
  return {*in.setup.spec, *in.dataset, plan, in.context, in.on_device};
}

void keep_check(ModeOutcome& o, modes::TrainResult r, const torch::nn::Module& model,
                int64_t first_step) {
  o.trace.first_step = first_step;
  o.trace.losses = std::move(r.losses);
  o.trace.gradients = std::move(r.gradients);
  o.trace.loss_scales = std::move(r.loss_scales);
  o.trace.skipped = std::move(r.skipped);
  o.trace.final_state = std::move(r.final_state);
  o.trace.param_names = parameter_names(model);
  o.check_times = std::move(r.step_times);
}

std::unique_ptr<modes::StepTrace> traced(const PhaseInputs& in, modes::TrainOptions& options) {
  if (!in.setup.trace) return nullptr;
  auto trace = std::make_unique<modes::StepTrace>(in.grad_record);
  options.trace = trace.get();
  return trace;
}

void keep_trace(ModeOutcome& o, modes::StepTrace& trace) {
  o.trace_entries = trace.take();
  o.traced_forward = trace.saw_forward();
}

std::vector<metrics::PhaseTimes> timed_part(std::vector<metrics::PhaseTimes> all, int64_t warmup) {
  all.erase(all.begin(), all.begin() + std::min<int64_t>(warmup, static_cast<int64_t>(all.size())));
  return all;
}

void measure_after(modes::TrainOptions& options, int64_t last_step, modes::MemoryFootprint& out) {
  options.at_rest = [last_step, &out](int64_t step, torch::nn::Module& m,
                                      torch::optim::Optimizer& opt) {
    if (step == last_step) out = modes::measure_footprint(m, opt);
  };
}

modes::TrainOptions check_options(const PhaseInputs& in) {
  modes::TrainOptions o;
  o.first_step = in.setup.first_step();
  o.start_state = in.setup.start_state();
  o.steps = in.setup.check_steps - o.first_step;
  o.checking = true;
  o.grad_record = in.grad_record;
  return o;
}

CheckpointKeeper checkpoint_keeper(const PhaseInputs& in, ModeKind mode, ModeOutcome& o,
                                   Consolidate consolidate, bool keep,
                                   std::function<std::vector<std::vector<int64_t>>()> ddp_buckets) {
  if (in.setup.checkpoint_every <= 0) return nullptr;
  return [&in, mode, &o, consolidate = std::move(consolidate), keep,
          ddp_buckets = std::move(ddp_buckets)](int64_t step, torch::nn::Module& module,
                                                torch::optim::Optimizer& opt,
                                                const scenarios::GradScaler* scaler) {
    const RunSetup& s = in.setup;
    const int64_t done = step + 1;
    if (done % s.checkpoint_every != 0) return;
    std::unique_ptr<torch::optim::Optimizer> full;
    if (consolidate) full = consolidate(opt);
    std::vector<std::vector<int64_t>> buckets;
    if (ddp_buckets) buckets = ddp_buckets();
    if (!keep) return;
    checkpoint::CheckpointMeta meta{
        s.spec->name,   modes::mode_name(mode), s.seed, s.world_size,
        s.global_batch, s.dtype_name(),         done,   in.plan.locate(done).epoch};
    meta.model = s.spec->model_name;
    meta.amp = scenarios::amp_name(s.spec->amp);
    if (ddp_buckets) {
      meta.ddp_buckets = std::move(buckets);
      meta.ddp_bucket_cap_bytes = s.ddp.reducer.limits.bucket_cap_bytes;
    }
    o.checkpoints.push_back(
        {done, checkpoint::checkpoint_bytes(module, full ? *full : opt, s.spec->optimizer, meta,
                                       s.checkpoint_prefix, scaler)});
  };
}

modes::TrainOptions perf_options(const PhaseInputs& in) {
  modes::TrainOptions o;
  o.steps = in.setup.warmup_steps + in.setup.perf_steps;
  o.checking = false;
  o.numerics = runtime::NumericsPhase::kPerf;
  return o;
}

modes::TrainOptions accumulating(modes::TrainOptions o, const RunSetup& s, ModeKind mode) {
  o.micro_steps = mode == ModeKind::kSingle ? 1 : s.accumulation_steps;
  o.no_sync = s.no_sync;
  // The noscale fault belongs to the check phase, whose options come from check_options.
  if (o.checking && s.fault && s.fault->kind == modes::FaultKind::kNoScale) {
    o.unscaled_step = s.fault->step;
  }
  return o;
}

modes::TrainResult train_checked(const PhaseInputs& in, ModeKind mode, modes::GradientPath& path,
                                 modes::TrainOptions options, comm::Communicator* comm,
                                 bool measure_amp, ModeOutcome& o) {
  std::unique_ptr<LockstepDriver> driver;
  if (mode != ModeKind::kSingle && in.setup.lockstep) {
    driver = std::make_unique<LockstepDriver>(in, mode, path.module(), comm);
    options.before_step = [&driver](int64_t step, torch::nn::Module& m,
                                    torch::optim::Optimizer& opt) {
      driver->before_step(step, m, opt);
    };
    options.after_step = [after = std::move(options.after_step), &driver](
                             int64_t step, torch::nn::Module& m, torch::optim::Optimizer& opt,
                             const scenarios::GradScaler* scaler) {
      driver->after_step(step, m, opt);
      if (after) after(step, m, opt, scaler);
    };
  }
  std::unique_ptr<Float32Shadow> shadow;
  if (measure_amp && in.setup.spec->amp != scenarios::AmpKind::kOff &&
      (comm == nullptr || comm->rank() == 0)) {
    shadow = std::make_unique<Float32Shadow>(in, mode, path.module());
    // After lockstep has loaded the step's state; before anything else sees the step's result.
    options.before_step = [before = std::move(options.before_step), &shadow](
                              int64_t step, torch::nn::Module& m, torch::optim::Optimizer& opt) {
      if (before) before(step, m, opt);
      shadow->before_step(step, m, opt);
    };
    options.after_step = [after = std::move(options.after_step), &shadow](
                             int64_t step, torch::nn::Module& m, torch::optim::Optimizer& opt,
                             const scenarios::GradScaler* scaler) {
      shadow->after_step(step, m);
      if (after) after(step, m, opt, scaler);
    };
  }
  modes::TrainResult r = modes::train(path, train_inputs(in, in.plan), options);
  if (driver) {
    o.trace.comparison = "lockstep";
    o.trace.state_diffs = driver->finish(path.module());
  }
  if (shadow) o.amp_vs_float32 = shadow->finish(r, scenarios::amp_name(in.setup.spec->amp));
  return r;
}

std::vector<std::string> parameter_names(const torch::nn::Module& model) {
  std::vector<std::string> names;
  for (const auto& p : model.named_parameters()) names.push_back(p.key());
  return names;
}

}  // namespace ddpbench::training
