// fit_checks.cpp — see fit_checks.h.
#include "run/fit_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join
#include <torch/torch.h>

#include <algorithm>

#include "errors.h"
#include "modes/common/forward_draws.h"
#include "modes/sync_bn/sync_batch_norm.h"
#include "scenarios/models/script_model.h"
#include "training/evaluation.h"

namespace ddpbench::run {
namespace {

using modes::ModeKind;

// A TorchScript model's BatchNorm layers are not ddpbench's: the exact reference forwards each
// rank chunk on its own to model them (training/exact_reference.h), which covers dp and ddp, but
// no SyncBN conversion reaches them and no reference models their statistics per micro-batch;
// random draws are seeded per (step, rank chunk), not per micro-batch. Refused where they would
// be needed, instead of a FAIL that would be ddpbench's own.
void check_script_model(const training::RunSetup& setup,
                        const scenarios::models::ScriptModelImpl& script) {
  if (setup.sync_bn) {
    throw InputError(
        "--sync-bn does not apply to a --model file: ddpbench cannot convert a TorchScript "
        "model's BatchNorm layers, and a model converted with "
        "torch.nn.SyncBatchNorm.convert_sync_batchnorm does not script (measured on 1.13); "
        "drop --sync-bn (ddp is then judged against per-rank BatchNorm)");
  }
  const bool replicated =
      setup.world_size > 1 && (setup.has_mode(ModeKind::kDp) || setup.has_per_rank_mode());
  if (setup.accumulation_steps > 1 && replicated && !script.facts().random_ops.empty()) {
    throw InputError(fmt::format(
        "--accumulation-steps {}: the --model file draws random numbers in forward ({}), which "
        "ddpbench seeds per step and rank, not per micro-batch; use --accumulation-steps 1 or "
        "--gpus 1",
        setup.accumulation_steps, fmt::join(script.facts().random_ops, ", ")));
  }
  // Note [Buffers updated in forward] (training/exact_reference.h).
  const std::vector<std::string>& written = script.facts().mutated_buffers;
  if (!written.empty() && setup.world_size > 1 && setup.has_per_rank_mode() &&
      !setup.ddp.broadcast_buffers) {
    throw InputError(fmt::format(
        "--no-broadcast-buffers: the --model file updates {} in forward, and without the "
        "broadcast each rank's copy drifts from the others' step after step, which no exact "
        "reference models; drop --no-broadcast-buffers",
        fmt::join(written, ", ")));
  }
  if (!written.empty() && replicated && setup.accumulation_steps > 1) {
    throw InputError(fmt::format(
        "--accumulation-steps {}: the --model file updates {} in forward, once per micro-batch "
        "from rank 0's copy of the micro-step before, which no exact reference models yet; use "
        "--accumulation-steps 1",
        setup.accumulation_steps, fmt::join(written, ", ")));
  }
}

bool holds_4d_parameter(torch::nn::Module& model) {
  for (const at::Tensor& p : model.parameters()) {
    if (p.dim() == 4) return true;
  }
  return false;
}

}  // namespace

void check_model_fits(const training::RunSetup& setup, torch::nn::Module& model) {
  const auto* script = dynamic_cast<const scenarios::models::ScriptModelImpl*>(&model);
  if (script != nullptr) check_script_model(setup, *script);
  // OneCycleLR raises once stepped past its total_steps.
  const scenarios::ScheduleSpec& sched = setup.spec->optimizer.schedule;
  const int64_t longest = std::max(setup.check_steps, setup.warmup_steps + setup.perf_steps);
  if (sched.kind == scenarios::ScheduleKind::kOneCycle && longest > sched.total_steps) {
    throw InputError(fmt::format(
        "SCHED.TOTAL_STEPS {} is shorter than this run's {} steps, and OneCycleLR cannot step "
        "past its total_steps: set SCHED.TOTAL_STEPS {} or more, or run fewer steps",
        sched.total_steps, longest, longest));
  }
  // A built-in model's Dropout draws as a script's do: per step and rank chunk, not per
  // micro-batch (modes/common/forward_draws.h).
  const bool replicated =
      setup.world_size > 1 && (setup.has_mode(ModeKind::kDp) || setup.has_per_rank_mode());
  if (script == nullptr && setup.accumulation_steps > 1 && replicated &&
      modes::ForwardDraws(model).seeds()) {
    throw InputError(fmt::format(
        "--accumulation-steps {}: scenario {}'s model draws random numbers in forward (Dropout), "
        "which ddpbench seeds per step and rank, not per micro-batch; use --accumulation-steps 1 "
        "or --gpus 1",
        setup.accumulation_steps, setup.spec->name));
  }
  if (setup.spec->channels_last && !holds_4d_parameter(model)) {
    throw InputError(fmt::format(
        "MODEL.CHANNELS_LAST: scenario {}'s model has no 4-D parameter (no convolution), so "
        "channels_last would change nothing; leave the key out or train a convolutional model",
        setup.spec->name));
  }
  if (setup.sync_bn && setup.has_per_rank_mode() && modes::sync_bn::count_batchnorm(model) == 0) {
    throw InputError(
        fmt::format("--sync-bn: scenario {} has no BatchNorm layer to convert", setup.spec->name));
  }
  if (setup.fault &&
      (setup.fault->kind == modes::FaultKind::kBuffers ||
       setup.fault->kind == modes::FaultKind::kDpBuffers) &&
      model.buffers().empty()) {
    throw InputError(fmt::format(
        "--inject-fault {}: scenario {} has no buffers to get wrong; use a BatchNorm scenario "
        "such as cifar_resnet18",
        modes::fault_name(setup.fault->kind), setup.spec->name));
  }
}

// Uneven rank batches (data/batch_plan.h) where a rank runs out of batches within the run: what
// the exact reference models of a joined rank, and where a `join` fault can fire.
void check_join_fits(const training::RunSetup& setup, torch::nn::Module& model,
                     const data::GlobalBatchPlan& plan) {
  const int64_t first_join = plan.rank_steps_per_epoch(0);  // rank 0's batch is the largest
  // What every refusal below starts with: how the plan makes a rank join, and when.
  const std::string joining = fmt::format(
      "global batch {} over {} ranks ({} per rank) makes rank 0 run out of batches at step {} of "
      "each epoch (Join)",
      setup.global_batch, setup.world_size, fmt::join(plan.local_batches(), ","), first_join);
  if (setup.in_join && setup.has_mode(ModeKind::kZero) && setup.zero_stage == 3) {
    // A joined stage-3 rank would have to shadow every all-gather of forward and backward;
    // PyTorch's FSDP does not support Join either (stages 1 and 2: Note [A joined zero rank]).
    throw InputError(fmt::format(
        "{}, which zero stage 3 does not model (PyTorch's FSDP has no Join either): pass "
        "--zero-stage 1 or 2, --steps {} or fewer, or a --batch-size that {} divides",
        joining, first_join, setup.world_size));
  }
  if (setup.in_join && setup.has_replicas()) {
    // A joined HSDP rank would contribute zeros to its shard group's reduce-scatter while its
    // replicas train: neither PyTorch (FSDP2 has no Join) nor ddpbench models it.
    throw InputError(fmt::format(
        "{}, which HSDP (--shard-group) does not model (FSDP2 has no Join): drop --shard-group, "
        "pass --steps {} or fewer, or a --batch-size that {} divides",
        joining, first_join, setup.world_size));
  }
  const bool joins = setup.in_join && setup.has_mode(ModeKind::kDdp);
  const bool zero_joins = setup.in_join && setup.has_mode(ModeKind::kZero);
  const modes::ddp::DdpOptions& ddp = setup.ddp;
  if (joins && ddp.impl == modes::ddp::DdpImpl::kC10d &&
      (ddp.reducer.find_unused_parameters || ddp.static_graph)) {
    // Note [A joined c10d rank] (modes/ddp/c10d_engine.h): the joined rank's unused-parameter
    // map allreduce and a static graph's delayed reduction are not driven.
    throw InputError(fmt::format(
        "{}, and --ddp-impl c10d does not drive a joined rank's {}: pass --steps {} or fewer, a "
        "--batch-size that {} divides, or drop {}",
        joining, ddp.static_graph ? "static-graph reduction" : "unused-parameter map", first_join,
        setup.world_size, ddp.static_graph ? "--static-graph" : "--find-unused-parameters"));
  }
  if (zero_joins && !model.buffers().empty()) {
    // zero broadcasts rank 0's buffers before every forward; inside Join PyTorch's DDP under
    // ZeroRedundancyOptimizer broadcasts the highest training rank's, which zero does not model.
    throw InputError(fmt::format(
        "{}, and zero does not model a joined rank's buffers (scenario {} has some): pass --steps "
        "{} or fewer, a --batch-size that {} divides, or --modes ddp",
        joining, setup.spec->name, first_join, setup.world_size));
  }
  if (joins && setup.sync_bn) {
    // A joined rank runs no forward, so it never joins SyncBN's collectives: PyTorch's Join does
    // not shadow them, and the others would wait for it.
    throw InputError(fmt::format(
        "{}, and a joined rank runs no SyncBN collective (PyTorch's Join does not shadow them: "
        "the others would hang): drop --sync-bn, pass --steps {} or fewer, or a --batch-size that "
        "{} divides",
        joining, first_join, setup.world_size));
  }
  if (setup.fault && setup.fault->kind == modes::FaultKind::kJoin) {
    const data::StepPosition pos = plan.locate(setup.fault->step);
    const int64_t rank_steps = plan.rank_steps_per_epoch(setup.fault->rank);
    if (rank_steps == plan.steps_per_epoch()) {
      throw InputError(fmt::format(
          "--inject-fault join: rank {} never runs out of batches ({} per rank: its batch is the "
          "smallest): pick a rank with a larger batch",
          setup.fault->rank, fmt::join(plan.local_batches(), ",")));
    }
    if (pos.step_in_epoch < rank_steps) {
      throw InputError(fmt::format(
          "--inject-fault join: rank {} still has a batch at step {} (it has {} of the epoch's {} "
          "steps, {} per rank): pick a step where it has run out, or a --batch-size that {} does "
          "not divide",
          setup.fault->rank, setup.fault->step, rank_steps, plan.steps_per_epoch(),
          fmt::join(plan.local_batches(), ","), setup.world_size));
    }
  }
}

// Gradient accumulation needs every step's share of every rank to split into equal micro-batches;
// an epoch's short last batch (drop_last=False) may not. Said before training (exit 2), rather
// than by the step loop when the step comes (exit 3).
void check_micro_batches(const training::RunSetup& setup, const data::GlobalBatchPlan& plan) {
  const int64_t a = setup.accumulation_steps;
  const bool parallel = setup.has_per_rank_mode() || setup.has_mode(ModeKind::kDp);
  if (a == 1 || !parallel) return;
  // Each phase walks the plan from step 0; every epoch has the same batch sizes.
  const int64_t steps = std::max(setup.check_steps, setup.warmup_steps + setup.perf_steps);
  for (int64_t step = 0; step < std::min(steps, plan.steps_per_epoch()); ++step) {
    const int64_t per_rank = plan.samples_at(step) / setup.world_size;
    if (per_rank % a != 0) {
      throw InputError(fmt::format(
          "--accumulation-steps {}: step {} gives each rank {} samples (the epoch's last, short "
          "batch), which do not split into {} equal micro-batches; pick --batch-size and "
          "--steps so every step in the run is a full batch, or another --accumulation-steps",
          a, step, per_rank, a));
    }
  }
}

// The evaluation pass's set must exist at the asked size before anything trains (a bad
// --eval-size is exit 2 now, not a failure after training), and the eval fault needs the pass.
void check_evaluation(const requests::RunRequest& request, const training::RunSetup& setup) {
  if (request.eval_size > 0 && !setup.spec->build_eval_dataset) {
    throw InputError(
        fmt::format("--eval-size: {} has no evaluation pass (not a classifier); drop --eval-size",
                    setup.spec->name));
  }
  if (setup.check_steps == 0) return;  // no trained model to evaluate
  std::string why;
  const bool runs = training::evaluation_set(setup, why) != nullptr;
  if (!runs && setup.fault && setup.fault->kind == modes::FaultKind::kEval) {
    throw InputError(fmt::format(
        "--inject-fault eval corrupts the evaluation pass, which this run skips ({}); use a "
        "classifier scenario and --eval-size > 0",
        why));
  }
}

}  // namespace ddpbench::run
