// exact_reference.cpp — see exact_reference.h.
#include "training/exact_reference.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join
#include <torch/torch.h>

#include "data/batch_plan.h"
#include "modes/sync_bn/sync_batch_norm.h"
#include "scenarios/models/script_model.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::training {

using modes::ModeKind;

std::string ExactReference::name() const {
  if (rule.plain()) return "single-device training";
  std::string s = fmt::format("exact reference: one device, {} rank chunks", rule.replicas);
  if (rule.forward_chunk_by_chunk) s += ", each chunk forwarded on its own";
  if (rule.autocast_per_chunk) s += " under autocast, with fresh weight casts";
  if (rule.micro_steps > 1) {
    s += fmt::format(", each chunk as {} accumulation micro-batches", rule.micro_steps);
  }
  if (rule.average_after_backward) s += ", gradients divided by K after backward";
  if (rule.forward_per_replica) s += ", each chunk's own BatchNorm statistics";
  if (rule.sync_bn_arithmetic) s += ", BatchNorm in SyncBN's arithmetic over the whole batch";
  s += rule.mean_of_replica_losses ? ", mean of per-rank losses" : ", loss of the gathered output";
  return s;
}

ExactReference exact_reference_for(const RunSetup& setup, ModeKind mode,
                                   const torch::nn::Module& model) {
  ExactReference ref;
  const int64_t k = setup.world_size;
  const scenarios::AmpKind amp = setup.spec->amp;
  // Under autocast each accumulation micro-step rounds its own gradients: even one rank's
  // micro-steps are not one single-device step.
  const int64_t micro = amp != scenarios::AmpKind::kOff ? setup.accumulation_steps : 1;
  if (mode == ModeKind::kSingle || (k == 1 && micro == 1)) return ref;
  const bool split = k > 1;  // the per-rank causes below need more than one rank
  // The BatchNorm2d layers SyncBN converts are the ones ghost BatchNorm models; a TorchScript
  // model's are its own, modelled by forwarding each rank chunk on its own.
  const scenarios::models::ScriptModelFacts* script = scenarios::models::script_model_facts(model);
  const int64_t script_bn = script != nullptr ? script->batch_norm_layers : 0;
  const bool draws = script != nullptr && !script->random_ops.empty();
  const std::vector<std::string> written =
      script != nullptr ? script->mutated_buffers : std::vector<std::string>{};
  const int64_t bn = modes::sync_bn::count_batchnorm(model) + script_bn;
  const bool ddp = modes::runs_per_rank(mode);  // zero's ranks forward as DDP's
  const std::vector<int64_t> sizes = data::split_sizes(setup.global_batch, k);
  const bool uneven = sizes.front() != sizes.back();
  const std::string local =
      uneven ? fmt::format("{} (rank by rank)", fmt::join(sizes, ",")) : std::to_string(sizes[0]);
  if (split && bn > 0 && ddp && !setup.sync_bn) {
    ref.causes.push_back(fmt::format(
        "BatchNorm without SyncBN: {} BatchNorm layers normalise each rank's {} samples with that "
        "rank's statistics, and the running statistics are rank 0's",
        bn, local));
  }
  if (split && bn > 0 && !ddp) {
    ref.causes.push_back(fmt::format(
        "DataParallel BatchNorm: {} BatchNorm layers normalise each replica's {} samples with that "
        "replica's statistics, and the running statistics are replica 0's",
        bn, local));
  }
  if (split && draws) {
    // The cause's name is the text before its first colon: the op names come after it.
    ref.causes.push_back(fmt::format(
        "Random draws in forward: each {} draws for its own {} samples from a generator seeded "
        "for (step, rank), not once for the whole batch (Note [Same random draws in every "
        "mode]; {})",
        ddp ? "rank" : "replica", local, fmt::join(script->random_ops, ", ")));
  }
  if (split && !written.empty()) {
    // Note [Buffers updated in forward] (exact_reference.h).
    ref.causes.push_back(fmt::format(
        "Buffers updated in forward: each {0} updates its own copy of {1} from its own {2} "
        "samples before using it, starting from {0} 0's, and {0} 0's is kept ({3})",
        ddp ? "rank" : "replica", fmt::join(written, ", "), local,
        ddp ? "DDP broadcasts rank 0's buffers before every forward"
            : "DataParallel's replica 0 updates the module's own buffers"));
  }
  // Note [SyncBN arithmetic reference] (modes/common/global_batch_norm.h).
  const bool sync_arithmetic =
      split && bn > 0 && ddp && setup.sync_bn && setup.context.dtype != at::kDouble;
  if (sync_arithmetic) {
    ref.causes.push_back(fmt::format(
        "SyncBN arithmetic below float64: {} SyncBN layers normalise as (x - mean) * invstd with "
        "float64 statistics, PyTorch's BatchNorm kernel as x * a + b, and the two roundings can "
        "give a ReLU input near 0 opposite signs; the reference computes BatchNorm as SyncBN does, "
        "on the whole batch",
        bn));
  }
  const scenarios::LossKind loss = setup.spec->loss;
  if (split && ddp && !scenarios::loss_is_sample_mean(loss)) {
    ref.causes.push_back(fmt::format(
        "Per-rank {0}: {0} is not a mean of per-sample terms, and DDP averages the gradients of "
        "each rank's own loss",
        scenarios::loss_name(loss)));
  }
  if (ddp && uneven) {
    ref.causes.push_back(fmt::format(
        "Uneven rank batches: the global batch of {} splits over {} ranks as {}, and DDP averages "
        "each rank's mean-loss gradient over the world size, which weights the samples of a "
        "smaller rank batch more than the global mean does; a rank that runs out of batches "
        "before the epoch's end joins with zero gradients (PyTorch's Join, gradients divided by "
        "the initial world size)",
        setup.global_batch, k, fmt::join(sizes, ",")));
  }
  if (amp != scenarios::AmpKind::kOff) {
    const char* who = ddp ? "rank" : "replica";
    const std::string pieces =
        micro == 1 ? fmt::format("each {}'s {} samples", who, local)
                   : fmt::format("each of a {}'s {} accumulation micro-batches ({} samples each)",
                                 who, micro, sizes[0] / micro);
    ref.causes.push_back(fmt::format(
        "Mixed precision: under autocast to {} each {} casts its own weights{} and its "
        "gradients are rounded to {} before they are {}; the reference forwards {} on their own, "
        "with fresh casts, so its gradients are rounded the same way",
        scenarios::amp_name(amp), who, micro == 1 ? "" : " in every micro-step",
        scenarios::amp_name(amp),
        micro == 1 ? (ddp ? "averaged over the ranks" : "summed onto the master")
                   : (ddp ? "accumulated in float32 and averaged over the ranks"
                          : "accumulated in float32 on the master"),
        pieces));
  }
  if (ref.causes.empty()) return ref;
  ref.rule.replicas = k;
  ref.rule.sync_bn_arithmetic = sync_arithmetic;
  ref.rule.forward_chunk_by_chunk =
      script_bn > 0 || draws || !written.empty() || amp != scenarios::AmpKind::kOff;
  // Forwarding chunk by chunk gives each chunk its own BatchNorm statistics already.
  ref.rule.forward_per_replica =
      bn > 0 && !(ddp && setup.sync_bn) && amp == scenarios::AmpKind::kOff;
  ref.rule.autocast_per_chunk = amp != scenarios::AmpKind::kOff;
  ref.rule.micro_steps = micro;
  // For a per-sample mean loss and equal chunks the two loss rules are the same function; one
  // rule lets DP and DDP share one reference run. DP's loss is the gathered output's, the global
  // mean, whatever the chunks: uneven chunks change only DDP's. Under autocast they differ
  // (each rank's gradient is that of its own loss, rounded, then divided by K).
  ref.rule.mean_of_replica_losses =
      ddp && (!scenarios::loss_is_sample_mean(loss) || uneven || ref.rule.autocast_per_chunk);
  ref.rule.average_after_backward = ddp && ref.rule.autocast_per_chunk;
  return ref;
}

}  // namespace ddpbench::training
