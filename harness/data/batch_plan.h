// batch_plan.h — the global batch plan (Note [Same samples in every mode] in docs/ARCHITECTURE.md):
// which samples every mode sees at every step. At step s the global batch is the concatenation over
// ranks r of rank r's s-th local batch from the PyTorch-exact DistributedSampler. Single mode
// trains on that global batch, DP scatters it in rank order, DDP rank r loads only its own slice.
// Pure: no I/O, no dist.
//
// A global batch B that K does not divide is split as torch.tensor_split splits B rows into K
// parts (the first B mod K ranks get one sample more: 20 over 3 = 7,7,6; DataParallel's scatter
// cuts 20 the same way). Every rank's sampler share has the same length, so a rank with the larger
// local batch runs out of batches first: on an epoch's last steps it has none (an empty local
// batch) while the others still train — what PyTorch's Join context lets DDP do.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "data/distributed_sampler.h"

namespace ddpbench::data {

struct StepPosition {
  int64_t epoch = 0;
  int64_t step_in_epoch = 0;
};

// One epoch's batches, computed once (one shuffle) and sliced per step and rank.
class EpochPlan {
 public:
  // `local_batches`: rank r's local batch size, one per rank of `rank_indices`.
  EpochPlan(std::vector<std::vector<int64_t>> rank_indices, std::vector<int64_t> local_batches);

  // Steps of the epoch: the most any rank has.
  int64_t num_steps() const { return num_steps_; }
  int64_t num_ranks() const { return static_cast<int64_t>(rank_indices_.size()); }
  // Rank r's s-th local batch; the last one may be short (DataLoader drop_last=False), and it is
  // empty on the steps after the rank ran out of batches (it has joined). Throws InputError for a
  // step outside [0, num_steps()).
  std::vector<int64_t> local_batch(int64_t step, int64_t rank) const;
  // Concatenation over ranks in rank order of local_batch(step, r).
  std::vector<int64_t> global_batch(int64_t step) const;
  // Every rank's local batch size at `step` (0 for a rank that has joined), in rank order: the
  // chunks of global_batch(step).
  std::vector<int64_t> chunk_sizes(int64_t step) const;
  // Whether the ranks' local batch sizes differ (then some rank may run out first).
  bool uneven() const;
  const std::vector<int64_t>& rank_indices(int64_t rank) const;

 private:
  std::vector<std::vector<int64_t>> rank_indices_;
  std::vector<int64_t> local_batches_;
  int64_t num_steps_ = 0;
};

// torch.tensor_split's sizes for `total` rows in `parts` parts: the first total mod parts get
// total / parts + 1, the others total / parts (20 over 3 = 7,7,6).
std::vector<int64_t> split_sizes(int64_t total, int64_t parts);

class GlobalBatchPlan {
 public:
  // Throws InputError when global_batch <= 0 or leaves some rank without a sample per step
  // (global_batch < number of replicas).
  GlobalBatchPlan(SamplerOptions sampler, int64_t global_batch);

  int64_t global_batch() const { return global_batch_; }
  // Rank 0's local batch, the largest (all of them when K divides the global batch).
  int64_t local_batch() const { return local_batches_.front(); }
  // Every rank's local batch size (split_sizes of the global batch).
  const std::vector<int64_t>& local_batches() const { return local_batches_; }
  bool uneven() const { return local_batches_.front() != local_batches_.back(); }
  // Whether a rank runs out of batches within the run's first `steps` steps, where a PyTorch
  // user must train inside Join (rank 0's batch is the largest, so it runs out first).
  bool joins_within(int64_t steps) const {
    return uneven() && rank_steps_per_epoch(0) < steps_per_epoch() &&
           steps > rank_steps_per_epoch(0);
  }
  int64_t num_replicas() const { return sampler_.options().num_replicas; }
  // Steps per epoch: the most any rank has, ceil(num_samples / smallest local batch).
  int64_t steps_per_epoch() const;
  // Rank r's batches per epoch, ceil(num_samples / local batch of r); a rank with fewer than
  // steps_per_epoch() has joined (shadows the others, PyTorch's Join) on the epoch's last steps.
  int64_t rank_steps_per_epoch(int64_t rank) const;
  // Maps a run-global step number onto (epoch, step within epoch).
  StepPosition locate(int64_t global_step) const;
  // Samples all ranks together really process at run-global `step`: the global batch, or less on
  // an epoch's last step when the ranks' shares run out (e.g. a batch larger than the dataset).
  int64_t samples_at(int64_t global_step) const;
  // Their mean over `steps` steps from `first_step`: what throughput counts.
  double mean_samples_per_step(int64_t first_step, int64_t steps) const;
  EpochPlan epoch(int64_t epoch) const;
  const DistributedSampler& sampler() const { return sampler_; }

 private:
  DistributedSampler sampler_;
  int64_t global_batch_;
  std::vector<int64_t> local_batches_;
};

// Walks a plan step by step for a training loop, building each epoch's plan (one shuffle) only
// when the run crosses into that epoch.
class PlanCursor {
 public:
  explicit PlanCursor(const GlobalBatchPlan& plan) : plan_(plan) {}
  // The epoch plan that holds run-global `step`; `pos` receives the step's position in it.
  const EpochPlan& seek(int64_t step, StepPosition& pos);

 private:
  const GlobalBatchPlan& plan_;
  std::optional<EpochPlan> epoch_;
  int64_t current_epoch_ = -1;
};

}  // namespace ddpbench::data
