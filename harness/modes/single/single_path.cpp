// single_path.cpp — see single_path.h.
#include "modes/single/single_path.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include "errors.h"
#include "modes/common/float_units.h"
#include "modes/common/forward_draws.h"
#include "modes/common/global_batch_norm.h"
#include "modes/single/ghost_batch_norm.h"
#include "modes/single/rank_threads.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes::single {
namespace {

class SinglePath : public GradientPath {
 public:
  SinglePath(const scenarios::ScenarioSpec& spec, scenarios::ScenarioInstance& instance,
             const runtime::ExecutionContext& context, const ReferenceRule& rule)
      : spec_(spec),
        model_(instance.model),
        rule_(rule),
        chunks_(std::make_shared<GhostChunks>()),
        draws_(*model_.ptr()) {
    context.place_model(*model_.ptr());
    if (rule_.forward_per_replica) install_ghost_batch_norm(*model_.ptr(), chunks_);
    if (rule_.sync_bn_arithmetic) install_global_batch_norm(*model_.ptr(), nullptr);
    if (rule_.forward_ranks_in_threads) {
      rank_threads_ = std::make_unique<RankThreads>(*model_.ptr(), rule_.replicas);
    }
  }

  torch::nn::Module& module() override { return *model_.ptr(); }
  std::string who() const override { return rule_.plain() ? "single" : "reference"; }

  std::vector<std::vector<int64_t>> step_shards(const data::EpochPlan& epoch,
                                                int64_t step_in_epoch) const override {
    // The rank chunks of this step, for forward_loss and the ghost BatchNorm (one load, one
    // forward: the chunk structure is bookkeeping, not a second path).
    if (!rule_.plain()) {
      chunks_->sizes = epoch.chunk_sizes(step_in_epoch);
      epoch_end_ = step_in_epoch == epoch.num_steps() - 1;
    }
    return {epoch.global_batch(step_in_epoch)};
  }

  at::Tensor forward_loss(const std::vector<data::Batch>& shards, int64_t step) override {
    const data::Batch& batch = shards.front();
    if (rule_.plain()) {
      return scenarios::compute_loss(spec_, draws_.forward(model_, batch.inputs, step, 0),
                                     batch.targets);
    }
    const int64_t k = rule_.replicas;
    const std::vector<int64_t>& sizes = chunks_->sizes;
    chunks_->keep = kept_rank(sizes, step);
    int64_t rows = 0;
    for (const int64_t n : sizes) rows += n;
    if (static_cast<int64_t>(sizes.size()) != k || rows != batch.inputs.size(0)) {
      throw WorkerFailure(
          fmt::format("reference: step {}: global batch {} does not split into {} "
                      "rank chunks of the plan",
                      step, batch.inputs.size(0), k));
    }
    const std::vector<Piece> pieces = pieces_of(sizes, step);
    if (rule_.backward_rank_by_rank) return rank_loss_terms(batch, pieces, step, rows);
    at::Tensor output;
    if (rule_.forward_chunk_by_chunk) {
      output = at::cat(forward_chunk_by_chunk(batch.inputs, pieces, step));
    } else if (rule_.forward_micro_step_by_micro_step || rule_.forward_ranks_in_threads) {
      output =
          forward_micro_step_by_micro_step(batch.inputs, pieces, rule_.forward_ranks_in_threads);
    } else {
      output = model_.forward(batch.inputs);
    }
    const int64_t a = rule_.micro_steps;
    if (!rule_.mean_of_replica_losses) {
      if (a == 1) return scenarios::compute_loss(spec_, output, batch.targets);
      return gathered_micro_step_losses(output, batch.targets, pieces);
    }
    at::Tensor sum;
    at::Tensor weighted;  // sum over pieces of samples x piece loss, for the recorded loss
    for (const Piece& piece : pieces) {
      if (piece.rows == 0) continue;  // a rank that ran out adds zero gradients (Join)
      at::Tensor l = scenarios::compute_loss(spec_, output.narrow(0, piece.begin, piece.rows),
                                             batch.targets.narrow(0, piece.begin, piece.rows));
      const at::Tensor w = l.detach() * static_cast<double>(piece.rows);
      weighted = weighted.defined() ? weighted + w : w;
      if (a > 1) l = l / static_cast<double>(a);  // the step loop's 1/A, per micro-step
      sum = sum.defined() ? sum + l : l;
    }
    recorded_loss_ = weighted / static_cast<double>(rows);
    // Over the initial world size K, not over the chunks present (divide_by_initial_world_size).
    if (rule_.average_after_backward) return sum;  // reduce_gradients divides
    return sum / static_cast<double>(k);
  }

  void backward(const at::Tensor& loss) override {
    if (!rule_.backward_rank_by_rank) {
      loss.backward();
      return;
    }
    // ReferenceRule::backward_rank_by_rank: rank 0's gradients first, rank K-1's added last.
    for (const at::Tensor& term : rank_terms_) {
      if (!rule_.nudge_gradients) {
        term.backward();
        continue;
      }
      // The nudge's scale: each entry's sum of the pieces' magnitudes (ReferenceRule).
      std::vector<at::Tensor> before;
      for (const at::Tensor& p : model_.ptr()->parameters()) {
        before.push_back(p.grad().defined() ? p.grad().clone() : at::Tensor());
      }
      term.backward();
      torch::NoGradGuard no_grad;
      size_t i = 0;
      magnitudes_.resize(before.size());
      for (const at::Tensor& p : model_.ptr()->parameters()) {
        if (p.grad().defined()) {
          const at::Tensor piece = before[i].defined() ? p.grad() - before[i] : p.grad();
          magnitudes_[i] = magnitudes_[i].defined() ? magnitudes_[i] + piece.abs() : piece.abs();
        }
        ++i;
      }
    }
    rank_terms_.clear();
  }
  // One device: the gradients are already the gradients, or their sum over the rank chunks
  // (average_after_backward), which DDP's average divides by K.
  void reduce_gradients() override {
    torch::NoGradGuard no_grad;
    double scaled = 1.0;
    if (rule_.average_after_backward || (rule_.backward_rank_by_rank && divide_after_backward_)) {
      scaled = 1.0 / static_cast<double>(rule_.replicas);
      for (at::Tensor& p : model_.ptr()->parameters()) {
        if (p.grad().defined()) p.mutable_grad().mul_(scaled);
      }
    }
    if (rule_.nudge_gradients) nudge_gradients(scaled);
  }

  // ReferenceRule::nudge_gradients: every entry moved up or down by one unit in the last place of
  // the sum of its pieces' magnitudes, times `scaled` as the gradient was (a sum in another order
  // moves an entry by up to about that: more than a unit of the entry itself where the pieces
  // cancel). The direction is drawn per entry from a generator seeded by
  // the count of steps nudged so far (the twin steps in order, so the draws repeat from run to
  // run). An entry whose pieces are all zero stays: zeros sum to zero in any order.
  void nudge_gradients(double scaled) {
    at::Generator draws = at::make_generator<at::CPUGeneratorImpl>(0x6e75646765 + nudges_++);
    size_t i = 0;
    for (at::Tensor& p : model_.ptr()->parameters()) {
      const size_t index = i++;
      if (!p.grad().defined()) continue;
      const at::Tensor g = p.grad();
      const at::Tensor up =
          at::bernoulli(at::full(g.sizes(), 0.5, at::kDouble), draws).to(g.device());
      const at::Tensor magnitude = index < magnitudes_.size() && magnitudes_[index].defined()
                                       ? magnitudes_[index] * scaled
                                       : g.abs();
      p.mutable_grad() =
          g + at::where(up > 0.5, 1.0, -1.0).to(g.scalar_type()) * unit_in_last_place(magnitude);
    }
    magnitudes_.clear();
  }

  at::Tensor eval_forward(const at::Tensor& inputs) override {
    torch::NoGradGuard no_grad;
    model_.ptr()->eval();
    at::Tensor out = model_.forward(inputs);
    model_.ptr()->train();
    return out;
  }

  // A rank chunk's micro-batch (the whole chunk without accumulation), in global order:
  // rank-major, so rank r's micro-step m starts at the chunk's start plus m pieces.
  struct Piece {
    int64_t begin = 0;
    int64_t rows = 0;
    int64_t rank = 0;
    int64_t micro = 0;
  };

  // ReferenceRule::join_buffers: the rank whose running statistics survive step `step`, or -1
  // for the step's starting ones.
  int64_t kept_rank(const std::vector<int64_t>& sizes, int64_t step) const {
    int64_t first = -1;
    int64_t highest = -1;
    for (size_t r = 0; r < sizes.size(); ++r) {
      if (sizes[r] == 0) continue;
      if (first < 0) first = static_cast<int64_t>(r);
      highest = static_cast<int64_t>(r);
    }
    switch (rule_.join_buffers) {
      case JoinBuffers::kRankZero:
        return first;
      case JoinBuffers::kHighestRank:
        return highest;
      case JoinBuffers::kRankZeroView:
        if (epoch_end_ || step == rule_.last_step) return highest;  // Join's end synced
        return sizes.empty() || sizes[0] == 0 ? -1 : 0;
    }
    return first;
  }

  std::vector<Piece> pieces_of(const std::vector<int64_t>& sizes, int64_t step) const {
    const int64_t a = rule_.micro_steps;
    std::vector<Piece> pieces;
    int64_t begin = 0;
    for (size_t r = 0; r < sizes.size(); ++r) {
      if (sizes[r] % a != 0) {
        throw WorkerFailure(fmt::format(
            "reference: step {}: rank {}'s {} samples do not split into {} micro-batches", step, r,
            sizes[r], a));
      }
      for (int64_t m = 0; m < a; ++m) {
        pieces.push_back({begin, sizes[r] / a, static_cast<int64_t>(r), m});
        begin += sizes[r] / a;
      }
    }
    return pieces;
  }

  // DataParallel with accumulation: micro-step m scatters piece m of every rank chunk to the
  // replicas and takes the loss of their gathered outputs, divided by the micro-step count.
  at::Tensor gathered_micro_step_losses(const at::Tensor& output, const at::Tensor& targets,
                                        const std::vector<Piece>& pieces) {
    at::Tensor sum;
    for (int64_t m = 0; m < rule_.micro_steps; ++m) {
      std::vector<at::Tensor> outs;
      std::vector<at::Tensor> tgts;
      for (const Piece& piece : pieces) {
        if (piece.micro != m || piece.rows == 0) continue;
        outs.push_back(output.narrow(0, piece.begin, piece.rows));
        tgts.push_back(targets.narrow(0, piece.begin, piece.rows));
      }
      if (outs.empty()) continue;
      const at::Tensor l = scenarios::compute_loss(spec_, at::cat(outs), at::cat(tgts)) /
                           static_cast<double>(rule_.micro_steps);
      sum = sum.defined() ? sum + l : l;
    }
    return sum;
  }

  // ReferenceRule::backward_rank_by_rank: each rank chunk's loss from its own forward (so its own
  // graph), kept for backward. Under mean_of_replica_losses, or with equal chunks (where the
  // gathered mean is the mean of the chunk means), each term is the chunk's own mean loss and
  // reduce_gradients divides the sum of their gradients by K, as ranks do; with uneven chunks of
  // a gathered-output rule, each term is the chunk's mean weighted by its share of the rows.
  // Returns the step's loss as the rule records it.
  at::Tensor rank_loss_terms(const data::Batch& batch, const std::vector<Piece>& pieces,
                             int64_t step, int64_t rows) {
    const std::vector<at::Tensor> outputs = forward_chunk_by_chunk(batch.inputs, pieces, step);
    bool equal = true;
    for (const Piece& piece : pieces) equal = equal && piece.rows == pieces.front().rows;
    divide_after_backward_ = rule_.mean_of_replica_losses || equal;
    rank_terms_.clear();
    at::Tensor weighted;  // the sample-weighted mean of the chunk losses: the gathered mean
    size_t next = 0;
    for (const Piece& piece : pieces) {
      if (piece.rows == 0) continue;
      const at::Tensor l = scenarios::compute_loss(
          spec_, outputs[next++], batch.targets.narrow(0, piece.begin, piece.rows));
      const double share = static_cast<double>(piece.rows) / static_cast<double>(rows);
      // A micro-batch's mean loss counts 1/A of its rank's (the step loop's 1/A, per micro-step);
      // its share of the rows already is its share of the gathered mean.
      const int64_t a = rule_.micro_steps;
      rank_terms_.push_back(divide_after_backward_ ? (a > 1 ? l / static_cast<double>(a) : l)
                                                   : l * share);
      weighted = weighted.defined() ? weighted + l.detach() * share : l.detach() * share;
    }
    recorded_loss_ = weighted;
    return weighted;
  }

  // ReferenceRule::forward_chunk_by_chunk: rank r's forward (each of its micro-batches on its
  // own), r = 0..K-1, in order, and the buffers as rank 0's forward left them (DDP broadcasts
  // rank 0's before the next forward; DataParallel keeps replica 0's; inside Join, the rank
  // ReferenceRule::join_buffers names). Each piece's output.
  std::vector<at::Tensor> forward_chunk_by_chunk(const at::Tensor& inputs,
                                                 const std::vector<Piece>& pieces, int64_t step) {
    std::vector<at::Tensor> outputs;
    std::vector<at::Tensor> kept_buffers;
    // Every rank's forward starts from the step's buffers (Note [Buffers updated in forward],
    // training/exact_reference.h); its accumulation micro-steps follow its own
    // (Note [BatchNorm per micro-step], training/exact_reference.cpp).
    std::vector<at::Tensor> start_buffers;
    {
      torch::NoGradGuard no_grad;
      for (const at::Tensor& b : model_.ptr()->buffers()) start_buffers.push_back(b.clone());
    }
    const int64_t kept = chunks_->keep;  // ReferenceRule::join_buffers
    if (kept < 0) {
      for (const at::Tensor& b : start_buffers) kept_buffers.push_back(b.clone());
    }
    int64_t first_rank = -1;
    int64_t last_rank = -1;
    for (const Piece& piece : pieces) {
      if (piece.rows == 0) continue;  // a rank that ran out has no forward (Join)
      const bool new_rank = piece.rank != last_rank;
      last_rank = piece.rank;
      if (first_rank < 0) {
        first_rank = piece.rank;
      } else if (new_rank && !start_buffers.empty()) {
        std::vector<at::Tensor> buffers = model_.ptr()->buffers();
        for (size_t i = 0; i < start_buffers.size(); ++i) {
          buffers[i].set_data(start_buffers[i].clone());
        }
      }
      if (rule_.autocast_per_chunk) at::autocast::clear_cache();
      outputs.push_back(
          draws_.forward(model_, inputs.narrow(0, piece.begin, piece.rows), step, piece.rank));
      if (piece.rank == kept) {
        torch::NoGradGuard no_grad;
        kept_buffers.clear();
        for (const at::Tensor& b : model_.ptr()->buffers()) kept_buffers.push_back(b.clone());
      }
    }
    // set_data, not copy_: BatchNorm's backward saved its running statistics, and an in-place
    // copy would bump their version and fail that backward (BatchNorm's own update runs inside
    // its kernel and bumps none).
    std::vector<at::Tensor> buffers = model_.ptr()->buffers();
    for (size_t i = 0; i < kept_buffers.size(); ++i) buffers[i].set_data(kept_buffers[i]);
    return outputs;
  }

  // ReferenceRule::forward_micro_step_by_micro_step: micro-step m forwards piece m of every rank
  // chunk as one batch, in micro-step order; `in_threads` (forward_ranks_in_threads): each piece
  // in its own thread, the threads meeting at every BatchNorm layer. The output in global
  // (rank-major) order.
  at::Tensor forward_micro_step_by_micro_step(const at::Tensor& inputs,
                                              const std::vector<Piece>& pieces, bool in_threads) {
    std::vector<at::Tensor> outputs(pieces.size());
    for (int64_t m = 0; m < rule_.micro_steps; ++m) {
      std::vector<at::Tensor> parts;
      std::vector<size_t> which;
      for (size_t i = 0; i < pieces.size(); ++i) {
        if (pieces[i].micro != m || pieces[i].rows == 0) continue;
        parts.push_back(inputs.narrow(0, pieces[i].begin, pieces[i].rows));
        which.push_back(i);
      }
      if (parts.empty()) continue;
      if (in_threads) {
        const std::vector<at::Tensor> outs = rank_threads_->run(
            static_cast<int64_t>(parts.size()),
            [&](int64_t j) { return model_.forward(parts[static_cast<size_t>(j)]); });
        for (size_t j = 0; j < which.size(); ++j) outputs[which[j]] = outs[j];
        continue;
      }
      const at::Tensor out = model_.forward(at::cat(parts));
      int64_t at = 0;
      for (const size_t i : which) {
        outputs[i] = out.narrow(0, at, pieces[i].rows);
        at += pieces[i].rows;
      }
    }
    std::vector<at::Tensor> ordered;
    for (const at::Tensor& o : outputs) {
      if (o.defined()) ordered.push_back(o);
    }
    return at::cat(ordered);
  }

  // DDP records the sample-weighted mean of the ranks' losses; with chunks of unequal size that
  // is not the loss backpropagated above (sum / K).
  double finish_checked_step(int64_t /*step*/, double local_loss, int64_t /*samples*/) override {
    return recorded_loss_.defined() ? recorded_loss_.item<double>() : local_loss;
  }

 private:
  const scenarios::ScenarioSpec& spec_;
  torch::nn::AnyModule model_;
  ReferenceRule rule_;
  // This step's rank chunks (written by step_shards and forward_loss, read by ghost BatchNorm).
  std::shared_ptr<GhostChunks> chunks_;
  mutable bool epoch_end_ = false;  // this step ends its epoch (ReferenceRule::join_buffers)
  ForwardDraws draws_;
  at::Tensor recorded_loss_;
  std::vector<at::Tensor> rank_terms_;  // backward_rank_by_rank: this step's per-chunk loss terms
  bool divide_after_backward_ = false;  // backward_rank_by_rank: this step's terms are chunk means
  uint64_t nudges_ = 0;                 // nudge_gradients: steps nudged
  // nudge_gradients: per parameter, this step's sum of each piece's gradient magnitudes.
  std::vector<at::Tensor> magnitudes_;
  std::unique_ptr<RankThreads> rank_threads_;  // forward_ranks_in_threads
};

}  // namespace

std::unique_ptr<GradientPath> make_single_path(const scenarios::ScenarioSpec& spec,
                                               scenarios::ScenarioInstance& instance,
                                               const runtime::ExecutionContext& context,
                                               const ReferenceRule& rule) {
  return std::make_unique<SinglePath>(spec, instance, context, rule);
}

}  // namespace ddpbench::modes::single
