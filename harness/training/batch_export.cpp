// batch_export.cpp — see batch_export.h. The layout is documented in
// reference/torch_ddp_oracle.py, which reads it.
#include "training/batch_export.h"

#include <torch/torch.h>

#include <filesystem>

#include "errors.h"
#include "modes/common/forward_draws.h"
#include "modes/common/model_state.h"
#include "modes/ddp/comm_hook.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::training {
namespace {

// What reference/torch_ddp_oracle.py rebuilds the run from: the model, the optimizer, the DDP
// options, mixed precision and accumulation, as the oracle's argument names.
c10::impl::GenericDict oracle_meta(const RunSetup& setup,
                                   const runtime::ExecutionContext& context) {
  const scenarios::ScenarioSpec& spec = *setup.spec;
  c10::impl::GenericDict meta(c10::StringType::get(), c10::AnyType::get());
  meta.insert("model", spec.torch_oracle_model);
  if (!spec.model_file.empty()) {
    meta.insert("model_file", std::filesystem::absolute(spec.model_file).string());
  }
  meta.insert("num_classes", int64_t{10});
  meta.insert("world_size", setup.world_size);
  meta.insert("steps", setup.check_steps);
  // The loss names reference/torch_ddp_oracle.py understands: the --loss spellings.
  meta.insert("loss", std::string(name_in(scenarios::kLossNames, spec.loss)));
  meta.insert("label_smoothing", spec.label_smoothing);
  meta.insert("lr", spec.optimizer.lr);
  meta.insert("momentum", spec.optimizer.momentum);
  meta.insert("dampening", spec.optimizer.dampening);
  meta.insert("weight_decay", spec.optimizer.weight_decay);
  meta.insert("nesterov", spec.optimizer.nesterov);
  meta.insert("optimizer", std::string(name_in(scenarios::kOptimizerNames, spec.optimizer.kind)));
  // Parameter groups and the schedule (scenarios/optim/parameter_groups.h, lr_schedule.h).
  c10::impl::GenericList no_decay(c10::AnyType::get());
  for (const std::string& rule : spec.optimizer.no_decay) no_decay.push_back(rule);
  meta.insert("no_decay", no_decay);
  meta.insert("no_decay_lr_scale", spec.optimizer.no_decay_lr_scale);
  const scenarios::ScheduleSpec& sched = spec.optimizer.schedule;
  meta.insert("schedule", std::string(name_in(scenarios::kScheduleNames, sched.kind)));
  meta.insert("step_size", sched.step_size);
  meta.insert("gamma", sched.gamma);
  meta.insert("warmup_steps", sched.warmup_steps);
  meta.insert("decay_steps", sched.decay_steps);
  meta.insert("min_lr", sched.min_lr);
  meta.insert("total_steps", sched.total_steps);
  meta.insert("pct_start", sched.pct_start);
  c10::impl::GenericList betas(c10::AnyType::get());  // Any: see the lists below
  betas.push_back(spec.optimizer.beta1);
  betas.push_back(spec.optimizer.beta2);
  meta.insert("betas", betas);
  meta.insert("eps", spec.optimizer.eps);
  meta.insert("clip_grad_norm", spec.clip_grad_norm.value_or(0.0));
  meta.insert("dtype", std::string(context.dtype_name()));
  meta.insert("bucket_cap_mb",
              static_cast<double>(setup.ddp.reducer.limits.bucket_cap_bytes) / (1 << 20));
  meta.insert("broadcast_buffers", setup.ddp.broadcast_buffers);
  // With single in the run (or ddp and zero), modes below float64 are judged in lockstep:
  // state_<mode>.pt is then the state after the last lockstep step, each step started from the
  // reference's state, not a free-running trajectory; the oracle says so when it checks one.
  meta.insert("lockstep", setup.lockstep);
  meta.insert("bucket_cap_given", setup.ddp.reducer.limits.cap_given);
  meta.insert("first_bucket_mb",
              static_cast<double>(setup.ddp.reducer.limits.first_bucket_bytes) / (1 << 20));
  meta.insert("find_unused_parameters", setup.ddp.reducer.find_unused_parameters);
  meta.insert("static_graph", setup.ddp.static_graph);
  meta.insert("gradient_as_bucket_view", setup.ddp.gradient_as_bucket_view);
  meta.insert("comm_hook", std::string(modes::ddp::comm_hook_name(setup.ddp.reducer.comm_hook)));
  // --amp: torch.autocast around forward and loss; fp16 adds torch.amp.GradScaler.
  meta.insert("amp", std::string(scenarios::amp_name(spec.amp)));
  meta.insert("grad_scaler_init", spec.grad_scaler.init_scale);
  meta.insert("growth_interval", spec.grad_scaler.growth_interval);
  // Gradient accumulation: A micro-batches of each rank's local batch, no_sync on all but the last.
  meta.insert("accumulation_steps", setup.accumulation_steps);
  // MODEL.CHANNELS_LAST: model.to(memory_format=torch.channels_last), 4-D inputs likewise.
  meta.insert("channels_last", spec.channels_last);
  meta.insert("no_sync", setup.no_sync);
  // HSDP (--shard-group S): the oracle's --fsdp shards over a (K/S, S) mesh; 0 = the world.
  meta.insert("shard_group", setup.shard_group);
  return meta;
}

}  // namespace

std::vector<char> export_batches(const RunSetup& setup, const runtime::ExecutionContext& context,
                                 const data::Dataset& dataset, const data::GlobalBatchPlan& plan,
                                 const modes::NamedTensors& initial_state) {
  const scenarios::ScenarioSpec& spec = *setup.spec;
  if (spec.torch_oracle_model.empty()) {
    throw InputError("--export-batches: scenario " + spec.name +
                     " has no model the torch DDP oracle can rebuild");
  }
  const c10::impl::GenericDict meta = oracle_meta(setup, context);

  c10::Dict<std::string, at::Tensor> init;
  for (const auto& [name, t] : initial_state) init.insert(name, t);
  // Lists of Any, not c10::List<Tensor>: libtorch pickles a tensor list through
  // torch.jit._pickle.build_tensorlist, which torch.load's weights-only unpickler refuses.
  c10::impl::GenericList inputs(c10::AnyType::get());
  c10::impl::GenericList targets(c10::AnyType::get());
  // Uneven rank batches: each step's rank chunks and epoch, for the oracle to cut the global batch
  // as the plan does and run each epoch inside PyTorch's Join (a chunk of 0: that rank has run
  // out).
  at::Tensor chunk_sizes = at::zeros({setup.check_steps, setup.world_size}, at::kLong);
  at::Tensor epochs = at::zeros({setup.check_steps}, at::kLong);
  data::PlanCursor cursor(plan);
  for (int64_t step = 0; step < setup.check_steps; ++step) {
    data::StepPosition pos;
    const data::EpochPlan& epoch = cursor.seek(step, pos);
    const data::Batch b = context.place_batch(
        data::collate(dataset, epoch.global_batch(pos.step_in_epoch), pos.epoch));
    inputs.push_back(b.inputs);
    targets.push_back(b.targets);
    const std::vector<int64_t> sizes = epoch.chunk_sizes(pos.step_in_epoch);
    for (size_t r = 0; r < sizes.size(); ++r) {
      chunk_sizes[step][static_cast<int64_t>(r)] = sizes[r];
    }
    epochs[step] = pos.epoch;
  }
  // The generator seed of every rank's forward (Note [Same random draws in every mode]): the
  // oracle seeds its ranks with them, so a model with dropout draws what ddpbench's ranks drew.
  at::Tensor forward_seeds = at::empty({setup.check_steps, setup.world_size}, at::kLong);
  for (int64_t step = 0; step < setup.check_steps; ++step) {
    for (int64_t rank = 0; rank < setup.world_size; ++rank) {
      forward_seeds[step][rank] = static_cast<int64_t>(modes::forward_draw_seed(step, rank));
    }
  }
  c10::impl::GenericDict doc(c10::StringType::get(), c10::AnyType::get());
  doc.insert("forward_seeds", forward_seeds);
  if (plan.uneven()) {
    doc.insert("chunk_sizes", chunk_sizes);
    doc.insert("epochs", epochs);
  }
  doc.insert("meta", meta);
  doc.insert("init", init);
  doc.insert("inputs", inputs);
  doc.insert("targets", targets);
  return modes::pickle_for_torch_load(c10::IValue(doc));
}

}  // namespace ddpbench::training
