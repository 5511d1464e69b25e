// mode_phases.cpp — see mode_phases.h.
#include "training/mode_phases.h"

#include <torch/torch.h>

#include <cstring>

#include "launch/environment.h"
#include "modes/common/memory_footprint.h"
#include "modes/data_parallel/data_parallel_path.h"
#include "modes/ddp/ddp_path.h"
#include "modes/single/single_path.h"
#include "modes/zero/zero_path.h"
#include "scenarios/training_recipe.h"
#include "training/evaluation.h"
#include "training/float32_shadow.h"
#include "training/lockstep.h"
#include "training/parameter_travel.h"
#include "training/progress_line.h"

namespace ddpbench::training {
namespace {

using modes::ModeKind;

// A freshly initialised model over the run's dataset: every phase of every mode starts from the
// same initial weights.
scenarios::ScenarioInstance fresh_instance(const PhaseInputs& in) {
  return scenarios::instantiate_model(*in.setup.spec, in.setup.request, in.dataset);
}

modes::TrainInputs train_inputs(const PhaseInputs& in, const data::GlobalBatchPlan& plan) {
  return {*in.setup.spec, *in.dataset, plan, in.context};
}

// The check phase's results go into the outcome's trace.
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

// The timed steps of a perf phase: everything after its warm-up.
std::vector<metrics::PhaseTimes> timed_part(std::vector<metrics::PhaseTimes> all, int64_t warmup) {
  all.erase(all.begin(), all.begin() + std::min<int64_t>(warmup, static_cast<int64_t>(all.size())));
  return all;
}

// Every rank's host name, in rank order: a multi-host run's report says where each rank ran.
std::vector<std::string> rank_hosts(comm::Communicator& comm) {
  constexpr int64_t kMax = 64;  // a fixed size, so every rank's tensor matches; 0-terminated
  const std::string name = launch::host_name().substr(0, kMax - 1);
  at::Tensor mine = at::zeros({kMax}, at::kByte);
  std::memcpy(mine.data_ptr<uint8_t>(), name.data(), name.size());
  std::vector<std::string> hosts;
  for (const at::Tensor& t : comm.allgather(mine)) {
    const at::Tensor c = t.cpu().contiguous();
    hosts.emplace_back(reinterpret_cast<const char*>(c.data_ptr<uint8_t>()));
  }
  return hosts;
}

// Every rank's peak device memory, in rank order (empty on the CPU). Every rank trains on the same
// kind of device (one request), so all or none join the gather.
std::vector<int64_t> every_rank_peak_memory(const PhaseInputs& in, comm::Communicator& comm) {
  if (!in.context.on_cuda()) return {};
  const at::Tensor peak = at::tensor(in.context.peak_memory_bytes(1), at::kLong);
  const at::Tensor all = at::cat(comm.allgather(peak)).cpu();
  return {all.data_ptr<int64_t>(), all.data_ptr<int64_t>() + all.numel()};
}

// After `last_step`, at rest, this process's memory footprint into `out` (the gradients are still
// those of the step's reduction there).
void measure_after(modes::TrainOptions& options, int64_t last_step, modes::MemoryFootprint& out) {
  options.at_rest = [last_step, &out](int64_t step, torch::nn::Module& m,
                                      torch::optim::Optimizer& opt) {
    if (step == last_step) out = modes::measure_footprint(m, opt);
  };
}

// Collective: every rank's footprint, in rank order.
std::vector<reports::RankMemoryRecord> every_rank_memory(comm::Communicator& comm,
                                                         const modes::MemoryFootprint& f) {
  const at::Tensor mine = at::tensor(
      {f.parameter_bytes, f.gradient_bytes, f.optimizer_state_bytes, f.peak_rss_bytes}, at::kLong);
  std::vector<reports::RankMemoryRecord> out;
  const std::vector<at::Tensor> all = comm.allgather(mine);
  for (size_t r = 0; r < all.size(); ++r) {
    const at::Tensor c = all[r].cpu();
    const int64_t* v = c.data_ptr<int64_t>();
    out.push_back({static_cast<int64_t>(r), v[0], v[1], v[2], v[3]});
  }
  return out;
}

// A per-rank mode's outcome before its phases: what the setup says of it.
ModeOutcome rank_outcome(const PhaseInputs& in, ModeKind mode) {
  const RunSetup& s = in.setup;
  ModeOutcome o;
  o.mode = mode;
  o.world_size = s.world_size;
  o.backend = comm::backend_name(s.backend);
  o.perf_samples_per_step = in.plan.mean_samples_per_step(s.warmup_steps, s.perf_steps);
  return o;
}

// Collective, after a per-rank mode's phases: the slowest rank's times, the hosts, the device
// peaks and every rank's footprint into `o`.
void finish_rank_outcome(const PhaseInputs& in, comm::Communicator& comm, ModeOutcome& o,
                         const std::vector<metrics::PhaseTimes>& check_times,
                         const std::vector<metrics::PhaseTimes>& perf_times,
                         const modes::MemoryFootprint& footprint) {
  o.check_times = modes::ranks::slowest_rank_times(comm, check_times);
  o.perf_times = modes::ranks::slowest_rank_times(comm, perf_times);
  o.hosts = rank_hosts(comm);
  o.peak_device_memory_bytes = every_rank_peak_memory(in, comm);
  o.memory = every_rank_memory(comm, footprint);
}

// The check phase runs from the run's first step (--resume: the checkpoint's) to --steps.
modes::TrainOptions check_options(const PhaseInputs& in) {
  modes::TrainOptions o;
  o.first_step = in.setup.first_step();
  o.start_state = in.setup.start_state();
  o.steps = in.setup.check_steps - o.first_step;
  o.checking = true;
  o.grad_record = in.grad_record;
  return o;
}

// --checkpoint-every N: after every N-th run-global step, `mode`'s state as a checkpoint into `o`.
// Null without the flag. With `consolidate` (zero), every rank calls the keeper, which first
// gathers the whole optimizer state (collective), and only `keep` (rank 0) records it; likewise
// `ddp_buckets` (ddp) settles the buckets on every rank and gives the layout rank 0 records.
using Consolidate =
    std::function<std::unique_ptr<torch::optim::Optimizer>(torch::optim::Optimizer&)>;
std::function<void(int64_t, torch::nn::Module&, torch::optim::Optimizer&,
                   const scenarios::GradScaler*)>
checkpoint_keeper(const PhaseInputs& in, ModeKind mode, ModeOutcome& o,
                  Consolidate consolidate = nullptr, bool keep = true,
                  std::function<std::vector<std::vector<int64_t>>()> ddp_buckets = nullptr) {
  if (in.setup.checkpoint_every <= 0) return nullptr;
  return [&in, mode, &o, consolidate = std::move(consolidate), keep,
          ddp_buckets = std::move(ddp_buckets)](
             int64_t step, torch::nn::Module& module, torch::optim::Optimizer& opt,
             const scenarios::GradScaler* scaler) {
    const RunSetup& s = in.setup;
    const int64_t done = step + 1;
    if (done % s.checkpoint_every != 0) return;
    std::unique_ptr<torch::optim::Optimizer> full;
    if (consolidate) full = consolidate(opt);
    std::vector<std::vector<int64_t>> buckets;
    if (ddp_buckets) buckets = ddp_buckets();
    if (!keep) return;
    modes::CheckpointMeta meta{
        s.spec->name,   modes::mode_name(mode), s.seed, s.world_size,
        s.global_batch, s.dtype_name(),         done,   in.plan.locate(done).epoch};
    meta.model = s.spec->model_name;
    meta.amp = scenarios::amp_name(s.spec->amp);
    if (ddp_buckets) {
      meta.ddp_buckets = std::move(buckets);
      meta.ddp_bucket_cap_bytes = s.ddp.reducer.limits.bucket_cap_bytes;
    }
    o.checkpoints.push_back(
        {done, modes::checkpoint_bytes(module, full ? *full : opt, s.spec->optimizer, meta,
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

// Gradient accumulation: dp and ddp run the run's micro-steps per optimizer step; single (the
// reference) trains each step's whole batch in one pass, which is the claim being checked.
modes::TrainOptions accumulating(modes::TrainOptions o, const RunSetup& s, ModeKind mode) {
  o.micro_steps = mode == ModeKind::kSingle ? 1 : s.accumulation_steps;
  o.no_sync = s.no_sync;
  // The noscale fault belongs to the check phase, whose options come from check_options.
  if (o.checking && s.fault && s.fault->kind == modes::FaultKind::kNoScale) {
    o.unscaled_step = s.fault->step;
  }
  return o;
}

// A per-rank mode's perf phase options: run-wide step numbers for `on_phase` (perf steps follow
// the checked ones), and the footprint after its last step.
modes::TrainOptions rank_perf_options(
    const PhaseInputs& in, ModeKind mode,
    const std::function<void(int64_t, modes::StepPhase)>& on_phase,
    modes::MemoryFootprint& footprint) {
  modes::TrainOptions options = accumulating(perf_options(in), in.setup, mode);
  options.on_phase = [&on_phase, offset = in.setup.check_steps](int64_t step, modes::StepPhase p) {
    if (on_phase) on_phase(offset + step, p);
  };
  measure_after(options, options.steps - 1, footprint);
  return options;
}

// Lockstep: every step of `path` starts from its exact reference's state (training/lockstep.h); the
// per-step state differences go into the trace. Under --amp (on DDP rank 0, or in this process),
// every step is also taken in float32 from the same state (training/float32_shadow.h). `comm` as
// for LockstepDriver.
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

// The check phase of a local path: a fresh model trained on the run's plan, every step checked;
// then, for a mode (not an exact reference), the evaluation pass of the trained model.
template <typename MakePath>
void run_check_phase(const PhaseInputs& in, ModeKind mode, const MakePath& make_path,
                     const std::string& name, ModeOutcome& o, bool keep_checkpoints, bool evaluate,
                     bool measure_amp) {
  scenarios::ScenarioInstance instance = fresh_instance(in);
  const auto path = make_path(instance);
  ProgressLine progress(in.setup.progress, name + " (check)", in.setup.check_steps);
  modes::TrainOptions options = accumulating(check_options(in), in.setup, mode);
  options.overflow_step = in.setup.overflow_step();
  options.on_step = [&progress](int64_t step, double loss) { progress.update(step + 1, loss); };
  if (keep_checkpoints) options.after_step = checkpoint_keeper(in, mode, o);
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
  keep_check(o, train_checked(in, mode, *path, options, nullptr, measure_amp, o), path->module(),
             options.first_step);
  o.trace.parameter_travel = travel.finish();
  if (evaluate) {
    evaluate_local_mode(in.setup, in.context, *path, mode == ModeKind::kDataParallel, o.evaluation,
                        o.extra_checks);
  }
}

}  // namespace

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
    run_check_phase(in, mode, make_path, name, o, /*keep_checkpoints=*/true, /*evaluate=*/true,
                    /*measure_amp=*/true);
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
  run_check_phase(in, ModeKind::kSingle, make_path, "reference", o, /*keep_checkpoints=*/false,
                  /*evaluate=*/false, /*measure_amp=*/false);
  return o;
}

ModeOutcome run_ddp_rank(const PhaseInputs& in, comm::Communicator& comm,
                         const std::function<void(int64_t, modes::StepPhase)>& on_phase) {
  const RunSetup& s = in.setup;
  ModeOutcome o = rank_outcome(in, ModeKind::kDdp);
  modes::ddp::DdpPathOptions path_options{s.ddp, s.fault, s.sync_bn};
  // --resume from a DDP checkpoint: the buckets its step reduced with (made under this cap).
  if (s.resume && s.resume->meta.ddp_bucket_cap_bytes == s.ddp.reducer.limits.bucket_cap_bytes) {
    path_options.ddp.resume_buckets = s.resume->meta.ddp_buckets;
  }
  auto record_path = [&o](const modes::ddp::DdpPath& path) {
    o.bytes_per_step = path.bytes_per_step();
    o.buckets = path.num_buckets();
    o.gradient_collectives_per_step = path.gradient_collectives_per_step();
  };

  in.context.reset_peak_memory(1);
  modes::MemoryFootprint footprint;  // after the last step of the last phase
  std::vector<metrics::PhaseTimes> check_times;
  if (s.check_steps > 0) {
    scenarios::ScenarioInstance instance = fresh_instance(in);
    modes::ddp::DdpPath path(*s.spec, instance, comm, in.context, path_options);
    modes::TrainOptions options = accumulating(check_options(in), s, ModeKind::kDdp);
    options.on_phase = on_phase;
    if (modes::fault_on_rank(s.fault, modes::FaultKind::kScaler, comm.rank())) {
      options.diverged_scale_step = s.fault->step;
    }
    // Every rank settles the buckets the next step will use (a collective), rank 0 records
    // them in its checkpoint: a resumed run then sums in the uninterrupted run's order.
    options.after_step = checkpoint_keeper(in, ModeKind::kDdp, o, nullptr, comm.rank() == 0,
                                           [&path] {
                                             path.settle_buckets();
                                             return path.bucket_layout();
                                           });
    measure_after(options, s.check_steps - 1, footprint);
    keep_check(o, train_checked(in, ModeKind::kDdp, path, options, &comm, /*measure_amp=*/true, o),
               path.module(), options.first_step);
    check_times = std::move(o.check_times);
    record_path(path);
    const modes::ranks::RankDisagreement& d = path.disagreement();
    o.extra_checks.push_back(
        compare::rank_agreement_check(s.check_steps, d.step, d.rank, d.tensor));
    if (path.checks_buffers()) {
      const modes::ranks::RankDisagreement& b = path.buffer_disagreement();
      o.extra_checks.push_back(
          compare::buffer_agreement_check(s.check_steps, b.step, b.rank, b.tensor));
    }
    if (s.spec->amp == scenarios::AmpKind::kFp16) {
      const modes::ddp::ScaleDisagreement& g = path.scale_disagreement();
      o.extra_checks.push_back(
          compare::scale_agreement_check(s.check_steps, g.step, g.rank, g.scale, g.rank0_scale));
    }
    evaluate_ddp_rank(s, in.context, path, comm, o.evaluation, o.extra_checks);
  }

  std::vector<metrics::PhaseTimes> perf_times;
  if (s.perf_steps > 0) {
    path_options.fault.reset();  // faults belong to the check phase
    path_options.checking = false;
    path_options.ddp.resume_buckets.clear();  // the perf phase starts from step 0
    scenarios::ScenarioInstance instance = fresh_instance(in);
    modes::ddp::DdpPath path(*s.spec, instance, comm, in.context, path_options);
    const modes::TrainOptions options = rank_perf_options(in, ModeKind::kDdp, on_phase, footprint);
    perf_times = timed_part(modes::train(path, train_inputs(in, in.plan), options).step_times,
                            s.warmup_steps);
    record_path(path);
  }
  finish_rank_outcome(in, comm, o, check_times, perf_times, footprint);
  return o;
}

ModeOutcome run_zero_rank(const PhaseInputs& in, comm::Communicator& comm,
                          const std::function<void(int64_t, modes::StepPhase)>& on_phase) {
  const RunSetup& s = in.setup;
  ModeOutcome o = rank_outcome(in, ModeKind::kZero);
  modes::zero::ZeroPathOptions path_options{s.zero_stage, s.fault, /*checking=*/true};

  in.context.reset_peak_memory(1);
  modes::MemoryFootprint footprint;  // after the last step of the last phase
  std::vector<metrics::PhaseTimes> check_times;
  if (s.check_steps > 0) {
    scenarios::ScenarioInstance instance = fresh_instance(in);
    modes::zero::ZeroPath path(*s.spec, instance, comm, in.context, path_options);
    modes::TrainOptions options = accumulating(check_options(in), s, ModeKind::kZero);
    options.on_phase = on_phase;
    options.after_step = checkpoint_keeper(
        in, ModeKind::kZero, o,
        [&path, &s](torch::optim::Optimizer& local) {
          return path.consolidated_optimizer(local, s.spec->optimizer);
        },
        comm.rank() == 0);
    measure_after(options, s.check_steps - 1, footprint);
    keep_check(o,
               train_checked(in, ModeKind::kZero, path, options, &comm, /*measure_amp=*/false, o),
               path.module(), options.first_step);
    check_times = std::move(o.check_times);
    o.bytes_per_step = path.bytes_per_step();
    const modes::ranks::RankDisagreement& d = path.disagreement();
    o.extra_checks.push_back(
        compare::rank_agreement_check(s.check_steps, d.step, d.rank, d.tensor));
  }

  std::vector<metrics::PhaseTimes> perf_times;
  if (s.perf_steps > 0) {
    path_options.fault.reset();  // faults belong to the check phase
    path_options.checking = false;
    scenarios::ScenarioInstance instance = fresh_instance(in);
    modes::zero::ZeroPath path(*s.spec, instance, comm, in.context, path_options);
    const modes::TrainOptions options = rank_perf_options(in, ModeKind::kZero, on_phase, footprint);
    perf_times = timed_part(modes::train(path, train_inputs(in, in.plan), options).step_times,
                            s.warmup_steps);
    o.bytes_per_step = path.bytes_per_step();
  }
  finish_rank_outcome(in, comm, o, check_times, perf_times, footprint);
  return o;
}

ModeOutcome run_rank_mode(const PhaseInputs& in, ModeKind mode, comm::Communicator& comm,
                          const std::function<void(int64_t, modes::StepPhase)>& on_phase) {
  return mode == ModeKind::kZero ? run_zero_rank(in, comm, on_phase)
                                 : run_ddp_rank(in, comm, on_phase);
}

}  // namespace ddpbench::training
