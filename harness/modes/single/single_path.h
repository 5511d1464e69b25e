// single_path.h — single-device mode: the reference every other mode is judged against. It trains
// on the whole global batch of each step (the concatenation of all ranks' local batches from the
// plan) with plain autograd. By design it depends on no communication code and on no other mode
// (docs/ARCHITECTURE.md, "Layers"): the build gives this folder no way to include them.
//
// A ReferenceRule turns it into the *exact reference* of a data-parallel mode
// (Note [Exact per-rank reference] in docs/ARCHITECTURE.md): still one device and one model, but
// the global batch is cut into the K rank chunks in rank order (the plan's chunk sizes at each
// step: uneven when K does not divide the batch, 0 for a rank that ran out of samples), every
// BatchNorm normalises each chunk with that chunk's statistics ("ghost" batch statistics,
// ghost_batch_norm.h), and the loss follows the judged mode's rule. That is what DDP without SyncBN
// and DataParallel compute, written here without any of their code.
#pragma once

#include <memory>

#include "modes/common/gradient_path.h"
#include "runtime/execution_context.h"
#include "scenarios/scenario.h"

namespace ddpbench::modes::single {

// Whose running statistics the reference keeps after each step of a run inside PyTorch's Join
// (Note [PyTorch's Join, as it runs], modes/common/joined_batch.h), where every forward starts
// from the highest rank still training and Join's end copies that rank's to every rank.
enum class JoinBuffers {
  kRankZero,      // not inside Join: rank 0's (the first rank with samples)
  kRankZeroView,  // lockstep: what rank 0 holds after the step (its own, the step's start when
                  // it has joined, the highest training rank's where Join's end synced)
  kHighestRank,   // free-running: the highest training rank's, the chain every forward starts from
};

struct ReferenceRule {
  // Rank chunks of the global batch; 1 = plain single-device training.
  int64_t replicas = 1;
  // Per-chunk BatchNorm statistics, with the running statistics of chunk 0 (rank 0's, which DDP
  // broadcasts before the next forward; replica 0's, which DataParallel keeps). False models
  // SyncBN: statistics of the whole batch.
  bool forward_per_replica = false;
  // The loss backpropagated: the sum over chunks of each chunk's loss divided by K (DDP averages
  // the gradients of per-rank losses over the initial world size, and a rank that ran out of
  // samples adds zeros: PyTorch's Join), or the loss of the whole gathered output (single, DP).
  // The step's recorded loss is then the sample-weighted mean of the chunk losses, as DDP records.
  bool mean_of_replica_losses = false;
  // BatchNorm computed with SyncBN's arithmetic on the whole batch (modes/common/
  // global_batch_norm.h), not PyTorch's kernel: Note [SyncBN arithmetic reference].
  bool sync_bn_arithmetic = false;
  // Each rank chunk forwarded through the whole model on its own, in rank order, its random
  // draws seeded as rank r's (Note [Same random draws in every mode]), the running statistics
  // left as chunk 0's forward made them: per-rank BatchNorm and dropout for a model whose layers
  // are not ddpbench's (a TorchScript file), where ghost BatchNorm cannot reach.
  bool forward_chunk_by_chunk = false;
  // Gradient accumulation with SyncBN (Note [BatchNorm per micro-step], training/
  // exact_reference.cpp): micro-step m's pieces of every rank chunk forwarded together, m =
  // 0..micro_steps-1, so BatchNorm normalises each micro-step with the statistics of its samples
  // on every rank and updates its running statistics once per micro-step, as SyncBN does.
  bool forward_micro_step_by_micro_step = false;
  // SyncBN under autocast (Note [SyncBN under autocast judged], modes/single/rank_threads.h):
  // the rank chunks (with accumulation, one micro-step's pieces at a time) forwarded at once, each
  // in a thread of its own with its own weight casts, meeting at every BatchNorm layer for
  // SyncBN's statistics over all of them. With autocast_per_chunk.
  bool forward_ranks_in_threads = false;
  // Mixed precision (--amp): each chunk's forward casts the weights afresh (autocast's cache of
  // cast weights is dropped before it), so each chunk's gradients are rounded to the autocast
  // dtype on their own and summed in float32, as DP's replicas and DDP's ranks do. With
  // forward_chunk_by_chunk.
  bool autocast_per_chunk = false;
  // With mean_of_replica_losses: backpropagate the sum of the chunk losses and divide the
  // gradients by K afterwards, as DDP divides each rank's gradients of its own loss; dividing the
  // loss first changes what autocast rounds when K is not a power of two.
  bool average_after_backward = false;
  // Gradient accumulation under autocast_per_chunk: each rank chunk is cut into this many equal,
  // contiguous micro-batches (modes/common/micro_batches.h), each forwarded on its own with
  // fresh casts and its loss divided by the count, as DP's replicas and DDP's ranks run their
  // micro-steps: micro-step m of rank r is the chunk's m-th piece. DP's loss is the gathered
  // output of micro-step m (piece m of every chunk); DDP's, each piece's own.
  int64_t micro_steps = 1;
  // Each rank chunk's loss (with micro_steps, each micro-batch's, divided by their count)
  // backpropagated on its own, in rank order, and the rank gradients
  // divided by K after their sum (of each chunk's own mean loss; with uneven chunks under a
  // gathered-output rule, each chunk's share of the global mean instead): the same training in
  // exact arithmetic as the rule without it, with every gradient summed and scaled the way the
  // ranks' are, where one backward through the whole batch accumulates the chunks the other way
  // (autograd runs the graph recorded last, rank K-1's, first) and scales by 1/B at the loss.
  // Needs forward_chunk_by_chunk (each chunk's graph its own) and a loss that splits over the
  // chunks (a per-sample mean, or mean_of_replica_losses). With average_after_backward (DDP
  // under autocast), each piece's gradients are divided by K before they are added, as the
  // ranks divide theirs before the reduction. The rounding floor's twin
  // (training/floor_measurement.h); no judged mode is ever compared with it.
  bool backward_rank_by_rank = false;
  // With backward_rank_by_rank: after each step's gradients are summed (and divided by K), every
  // entry moved up or down, as drawn per entry, by one unit in the last place of the sum of its
  // pieces' magnitudes (divided alike): as far as a sum in another order moves it, in every entry
  // at once, and where the pieces cancel further than a unit of the sum itself. The rounding
  // floor's twin under autocast (Note [Mixed precision free-running],
  // training/floor_measurement.h); no judged mode is ever compared with it.
  bool nudge_gradients = false;
  // Inside Join: whose running statistics are kept, and the run's last step (Join's end).
  JoinBuffers join_buffers = JoinBuffers::kRankZero;
  int64_t last_step = -1;

  // With one chunk and micro-batches (--amp and accumulation at world 1) the rule is not plain.
  bool plain() const { return replicas == 1 && micro_steps == 1; }
  bool operator==(const ReferenceRule& o) const {
    return replicas == o.replicas && forward_per_replica == o.forward_per_replica &&
           mean_of_replica_losses == o.mean_of_replica_losses &&
           sync_bn_arithmetic == o.sync_bn_arithmetic &&
           forward_chunk_by_chunk == o.forward_chunk_by_chunk &&
           forward_micro_step_by_micro_step == o.forward_micro_step_by_micro_step &&
           forward_ranks_in_threads == o.forward_ranks_in_threads &&
           autocast_per_chunk == o.autocast_per_chunk &&
           average_after_backward == o.average_after_backward && micro_steps == o.micro_steps &&
           backward_rank_by_rank == o.backward_rank_by_rank &&
           nudge_gradients == o.nudge_gradients && join_buffers == o.join_buffers &&
           last_step == o.last_step;
  }
};

// Places the instance's model (context dtype and device) and trains it; `spec` and `instance`
// must outlive the path. The plan must have `rule.replicas` ranks when the rule is not plain.
std::unique_ptr<GradientPath> make_single_path(const scenarios::ScenarioSpec& spec,
                                               scenarios::ScenarioInstance& instance,
                                               const runtime::ExecutionContext& context,
                                               const ReferenceRule& rule = {});

}  // namespace ddpbench::modes::single
