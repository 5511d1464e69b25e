// exact_reference.cpp — see exact_reference.h.
#include "training/exact_reference.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join
#include <torch/torch.h>

#include "data/batch_plan.h"
#include "modes/common/forward_draws.h"
#include "modes/sync_bn/sync_batch_norm.h"
#include "scenarios/models/script_model.h"
#include "scenarios/optim/optimizer_state.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::training {

using modes::ModeKind;

std::string ExactReference::name() const {
  if (rule.plain()) return "single-device training";
  std::string s = fmt::format("exact reference: one device, {} rank chunks", rule.replicas);
  if (rule.forward_chunk_by_chunk) s += ", each chunk forwarded on its own";
  if (rule.forward_ranks_in_threads) {
    s += ", the chunks forwarded at once in threads of their own that meet at every BatchNorm";
  }
  if (rule.forward_micro_step_by_micro_step) {
    s += ", each micro-step's pieces of every chunk forwarded together";
  }
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

namespace {

// What the causes and the rule are decided from: the run's split of the batch and the model's
// features that make a data-parallel mode differ from one device training the whole batch.
struct SplitFacts {
  int64_t k = 1;  // ranks or replicas
  // Micro-steps the reference forwards on their own: accumulation under autocast (each rounds
  // its own gradients) or with BatchNorm (each normalises its own micro-batch).
  int64_t micro = 1;
  bool split = false;  // the per-rank causes need more than one rank
  bool ddp = false;    // a per-rank mode (zero's ranks forward as DDP's)
  bool sync_bn = false;
  int64_t bn = 0;                       // BatchNorm layers, a TorchScript model's included
  int64_t script_bn = 0;                // a TorchScript model's own (modelled chunk by chunk)
  std::vector<std::string> random_ops;  // non-empty: forward draws
  std::vector<std::string> written;     // buffers written in forward
  std::vector<int64_t> sizes;           // the rank chunks
  bool uneven = false;
  std::string local;  // "8", or "7,7,6 (rank by rank)"
  bool sync_arithmetic = false;
  scenarios::LossKind loss{};
  scenarios::AmpKind amp = scenarios::AmpKind::kOff;
  // Note [PyTorch's Join, as it runs] (modes/common/joined_batch.h): what a rank that runs out
  // of batches does that no reference models.
  bool stateful_optimizer = false;  // momentum or Adam: a joined DDP rank's goes stale
  bool zero_stage_one = false;      // ZeroRedundancyOptimizer's join hook steps stale gradients
  bool in_join = false;             // RunSetup::in_join
  bool lockstep = false;
  int64_t last_step = -1;
  bool draws() const { return !random_ops.empty(); }
  const char* who() const { return ddp ? "rank" : "replica"; }
  // Note [BatchNorm per micro-step].
  bool bn_per_micro_step() const { return bn > 0 && micro > 1; }
  // Note [SyncBN under autocast judged] (modes/single/rank_threads.h).
  bool sync_bn_in_threads() const {
    return split && bn > 0 && ddp && sync_bn && amp != scenarios::AmpKind::kOff;
  }
};

SplitFacts split_facts(const RunSetup& setup, ModeKind mode, const torch::nn::Module& model) {
  SplitFacts f;
  f.k = setup.world_size;
  f.amp = setup.spec->amp;
  f.stateful_optimizer = !scenarios::kept_state_names(setup.spec->optimizer).empty();
  f.zero_stage_one = mode == ModeKind::kZero && setup.zero_stage == 1;
  f.in_join = setup.in_join;
  f.lockstep = setup.lockstep;
  f.last_step = setup.check_steps - 1;
  f.split = f.k > 1;
  f.ddp = modes::runs_per_rank(mode);
  f.sync_bn = setup.sync_bn;
  // The BatchNorm2d layers SyncBN converts are the ones ghost BatchNorm models; a TorchScript
  // model's are its own, modelled by forwarding each rank chunk on its own.
  const scenarios::models::ScriptModelFacts* script = scenarios::models::script_model_facts(model);
  f.script_bn = script != nullptr ? script->batch_norm_layers : 0;
  if (script != nullptr) {
    f.random_ops = script->random_ops;
    f.written = script->mutated_buffers;
  } else if (modes::ForwardDraws(model).seeds()) {
    f.random_ops = {"aten::dropout"};  // a built-in model's Dropout modules
  }
  f.bn = modes::sync_bn::count_batchnorm(model) + f.script_bn;
  // Under autocast each accumulation micro-step rounds its own gradients, and with BatchNorm each
  // normalises its own micro-batch: even one rank's micro-steps are not one single-device step.
  f.micro = f.amp != scenarios::AmpKind::kOff || f.bn > 0 ? setup.accumulation_steps : 1;
  f.sizes = data::split_sizes(setup.global_batch, f.k);
  f.uneven = f.sizes.front() != f.sizes.back();
  f.local = f.uneven ? fmt::format("{} (rank by rank)", fmt::join(f.sizes, ","))
                     : std::to_string(f.sizes[0]);
  // Note [SyncBN arithmetic reference] (modes/common/global_batch_norm.h); under autocast the
  // rank threads compute SyncBN's arithmetic rank by rank instead.
  f.sync_arithmetic = f.split && f.bn > 0 && f.ddp && f.sync_bn &&
                      setup.context.dtype != at::kDouble && !f.sync_bn_in_threads();
  f.loss = setup.spec->loss;
  return f;
}

std::string mixed_precision_cause(const SplitFacts& f) {
  const std::string pieces =
      f.micro == 1 ? fmt::format("each {}'s {} samples", f.who(), f.local)
                   : fmt::format("each of a {}'s {} accumulation micro-batches ({} samples each)",
                                 f.who(), f.micro, f.sizes[0] / f.micro);
  // Note [Mixed precision free-running] (training/floor_measurement.h).
  const std::string drift =
      f.lockstep
          ? ""
          : fmt::format(
                "; free-running, the {0}s' float32 sums of their gradients may round otherwise "
                "than the reference's (at 3 or more {0}s), and the next steps' casts to {1} "
                "carry a last-bit difference of a weight to a whole {1} unit, so the "
                "trajectories drift apart over the steps: an item beyond its fixed limit is "
                "judged against the drift of a twin of the reference that sums the {0} "
                "gradients in another order (the rounding floor)",
                f.who(), scenarios::amp_name(f.amp));
  return fmt::format(
      "Mixed precision: under autocast to {} each {} casts its own weights{} and its "
      "gradients are rounded to {} before they are {}; the reference forwards {} {}, "
      "with fresh casts, so its gradients are rounded the same way{}",
      scenarios::amp_name(f.amp), f.who(), f.micro == 1 ? "" : " in every micro-step",
      scenarios::amp_name(f.amp),
      f.micro == 1 ? (f.ddp ? "averaged over the ranks" : "summed onto the master")
                   : (f.ddp ? "accumulated in float32 and averaged over the ranks"
                            : "accumulated in float32 on the master"),
      pieces,
      f.sync_bn_in_threads()
          ? "at once, each in a thread of its own, the threads meeting at every SyncBN layer "
            "for the statistics of every rank (Note [SyncBN under autocast judged])"
          : "on their own",
      drift);
}

// Note [BatchNorm per micro-step]: with gradient accumulation every micro-step's forward is a
// forward of its own, so BatchNorm normalises each micro-batch with that micro-batch's statistics
// (SyncBN: the statistics of the same micro-step's samples on every rank) and updates the running
// statistics A times per optimizer step. The running statistics kept are rank 0's (replica 0's)
// chain of A updates in any engine: DDP broadcasts rank 0's buffers before a forward (Python's
// after a synchronising forward, ddpbench's engine before one, zero before every one), and a
// rank's buffers never reach its own forward's output in training mode, only the next update; so
// where a rank > 0 starts its micro-steps changes nothing judged. The reference forwards each
// micro-batch on its own, rank by rank (SyncBN: each micro-step's pieces of every rank together),
// from the step's starting state.
std::string batch_norm_micro_step_cause(const SplitFacts& f) {
  std::vector<int64_t> pieces;
  for (const int64_t n : f.sizes) pieces.push_back(n / f.micro);
  if (f.ddp && f.sync_bn) {
    int64_t together = 0;
    for (const int64_t n : pieces) together += n;
    return fmt::format(
        "BatchNorm per micro-step: with {} accumulation micro-steps, {} SyncBN layers normalise "
        "each micro-step's {} samples (every rank's micro-batch) with their statistics and update "
        "the running statistics {} times a step; the reference forwards each micro-step's samples "
        "of every rank together",
        f.micro, f.bn, together, f.micro);
  }
  const bool uneven = pieces.front() != pieces.back();
  return fmt::format(
      "BatchNorm per micro-batch: with {} accumulation micro-steps, {} BatchNorm layers normalise "
      "each {}'s micro-batch of {} samples with its own statistics and update the running "
      "statistics {} times a step, {} 0's kept; the reference forwards each micro-batch on its own",
      f.micro, f.bn, f.who(),
      uneven ? fmt::format("{} ({} by {})", fmt::join(pieces, ","), f.who(), f.who())
             : std::to_string(pieces.front()),
      f.micro, f.who());
}

// Uneven rank batches under DDP (Note [PyTorch's Join, as it runs]): the weighting of the samples
// and Join's BatchNorm statistics, modelled; Join's optimizer steps, named as not modelled.
void add_uneven_batch_causes(const SplitFacts& f, int64_t global_batch,
                             std::vector<std::string>& causes) {
  causes.push_back(fmt::format(
      "Uneven rank batches: the global batch of {} splits over {} ranks as {}, and DDP averages "
      "each rank's mean-loss gradient over the world size, which weights the samples of a "
      "smaller rank batch more than the global mean does; a rank that runs out of batches "
      "before the epoch's end joins with zero gradients (PyTorch's Join, gradients divided by "
      "the initial world size){}",
      global_batch, f.k, fmt::join(f.sizes, ","),
      f.in_join && f.bn > 0
          ? fmt::format("; inside Join every forward starts from the BatchNorm statistics of "
                        "the highest rank still training, and Join's end gives every rank "
                        "that rank's, so the reference keeps {} (Note [PyTorch's Join, as it "
                        "runs])",
                        f.lockstep ? "rank 0's after each step, that rank's where Join ends"
                                   : "that rank's chain")
          : ""));
  if (f.zero_stage_one) {
    causes.push_back(
        "Join under ZeroRedundancyOptimizer (not modelled; the checks fail where it acts): a "
        "rank out of batches has left its loop, DDP's join hook reduces zeros and drops the "
        "result, and ZeroRedundancyOptimizer's join hook calls step() on what .grad still "
        "holds, the gradients of the rank's last trained step: the parameters it owns take "
        "that step's gradient again (PyTorch 1.13 and 2.11; Note [PyTorch's Join, as it runs])");
  } else if (f.stateful_optimizer) {
    causes.push_back(
        "Join with optimizer state (not modelled; the checks fail where it acts): a rank out "
        "of batches has left its loop and takes no optimizer step while it shadows the others; "
        "at the epoch's end Join copies the last rank's parameters to it, not its optimizer "
        "state, so its momentum (or Adam's moments) lags the others' and its updates part "
        "from theirs at the next epoch's first step (PyTorch 1.13 and 2.11; Note [PyTorch's "
        "Join, as it runs])");
  }
}

// Each cause that makes the mode differ from plain single-device training, in the order the
// report lists them (a cause's name is its text before the first colon).
std::vector<std::string> causes_of(const SplitFacts& f, int64_t global_batch) {
  std::vector<std::string> causes;
  const bool bn_micro = f.bn_per_micro_step();  // batch_norm_micro_step_cause names it
  if (bn_micro) causes.push_back(batch_norm_micro_step_cause(f));
  if (f.split && f.bn > 0 && f.ddp && !f.sync_bn && !bn_micro) {
    causes.push_back(fmt::format(
        "BatchNorm without SyncBN: {} BatchNorm layers normalise each rank's {} samples with that "
        "rank's statistics, and the running statistics are rank 0's",
        f.bn, f.local));
  }
  if (f.split && f.bn > 0 && !f.ddp && !bn_micro) {
    causes.push_back(fmt::format(
        "DataParallel BatchNorm: {} BatchNorm layers normalise each replica's {} samples with that "
        "replica's statistics, and the running statistics are replica 0's",
        f.bn, f.local));
  }
  if (f.split && f.draws()) {
    // The op names come after the cause's name.
    causes.push_back(fmt::format(
        "Random draws in forward: each {} draws for its own {} samples from a generator seeded "
        "for (step, rank), not once for the whole batch (Note [Same random draws in every "
        "mode]; {})",
        f.who(), f.local, fmt::join(f.random_ops, ", ")));
  }
  if (f.split && !f.written.empty()) {
    // Note [Buffers updated in forward] (exact_reference.h).
    causes.push_back(fmt::format(
        "Buffers updated in forward: each {0} updates its own copy of {1} from its own {2} "
        "samples before using it, starting from {0} 0's, and {0} 0's is kept ({3})",
        f.who(), fmt::join(f.written, ", "), f.local,
        f.ddp ? "DDP broadcasts rank 0's buffers before every forward"
              : "DataParallel's replica 0 updates the module's own buffers"));
  }
  if (f.sync_arithmetic) {
    causes.push_back(fmt::format(
        "SyncBN arithmetic below float64: {} SyncBN layers normalise as (x - mean) * invstd with "
        "float64 statistics, PyTorch's BatchNorm kernel as x * a + b, and the two roundings can "
        "give a ReLU input near 0 opposite signs; the reference computes BatchNorm as SyncBN does, "
        "on the whole batch",
        f.bn));
  }
  if (f.split && f.ddp && !scenarios::loss_is_sample_mean(f.loss)) {
    causes.push_back(fmt::format(
        "Per-rank {0}: {0} is not a mean of per-sample terms, and DDP averages the gradients of "
        "each rank's own loss",
        scenarios::loss_name(f.loss)));
  }
  if (f.ddp && f.uneven) add_uneven_batch_causes(f, global_batch, causes);
  if (f.amp != scenarios::AmpKind::kOff) causes.push_back(mixed_precision_cause(f));
  return causes;
}

// The reference rule that models the causes (exact_reference.h).
modes::single::ReferenceRule rule_of(const SplitFacts& f) {
  modes::single::ReferenceRule rule;
  const bool autocast = f.amp != scenarios::AmpKind::kOff;
  rule.replicas = f.k;
  rule.sync_bn_arithmetic = f.sync_arithmetic;
  const bool synced_bn = f.ddp && f.sync_bn;
  rule.forward_ranks_in_threads = f.sync_bn_in_threads();
  // Per-rank BatchNorm statistics of micro-batches need each one forwarded on its own;
  // SyncBN's, each micro-step's pieces of every rank together (Note [BatchNorm per micro-step]).
  const bool bn_micro = f.bn_per_micro_step();
  rule.forward_chunk_by_chunk =
      !rule.forward_ranks_in_threads &&
      (f.script_bn > 0 || f.draws() || !f.written.empty() || autocast || (bn_micro && !synced_bn));
  rule.forward_micro_step_by_micro_step =
      bn_micro && synced_bn && !rule.forward_chunk_by_chunk && !rule.forward_ranks_in_threads;
  // Forwarding chunk by chunk gives each chunk its own BatchNorm statistics already.
  rule.forward_per_replica = f.bn > 0 && !synced_bn && !rule.forward_chunk_by_chunk;
  rule.autocast_per_chunk = autocast;
  rule.micro_steps = f.micro;
  // For a per-sample mean loss and equal chunks the two loss rules are the same function; one
  // rule lets DP and DDP share one reference run. DP's loss is the gathered output's, the global
  // mean, whatever the chunks: uneven chunks change only DDP's. Under autocast they differ
  // (each rank's gradient is that of its own loss, rounded, then divided by K).
  rule.mean_of_replica_losses =
      f.ddp && (!scenarios::loss_is_sample_mean(f.loss) || f.uneven || autocast);
  rule.average_after_backward = f.ddp && autocast;
  // Inside Join every forward starts from the highest training rank's buffers, and Join's end
  // gives every rank that rank's (Note [PyTorch's Join, as it runs]).
  if (f.in_join && f.ddp && f.bn > 0) {
    rule.join_buffers = f.lockstep ? modes::single::JoinBuffers::kRankZeroView
                                   : modes::single::JoinBuffers::kHighestRank;
    rule.last_step = f.last_step;
  }
  return rule;
}

}  // namespace

ExactReference exact_reference_for(const RunSetup& setup, ModeKind mode,
                                   const torch::nn::Module& model) {
  ExactReference ref;
  if (mode == ModeKind::kSingle) return ref;
  const SplitFacts facts = split_facts(setup, mode, model);
  if (!facts.split && facts.micro == 1) return ref;
  ref.causes = causes_of(facts, setup.global_batch);
  if (!ref.causes.empty()) ref.rule = rule_of(facts);
  return ref;
}

}  // namespace ddpbench::training
