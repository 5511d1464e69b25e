// batch_plan.h — the global batch plan (docs/ARCHITECTURE.md, contract 1): which samples every mode
// sees at every step. At step s the global batch is the concatenation over ranks r of rank r's s-th
// local batch (size B/K) from the PyTorch-exact DistributedSampler. Single mode trains on that
// global batch, DP scatters it in rank order, DDP rank r loads only its own slice. Pure: no I/O, no
// dist.
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
  EpochPlan(std::vector<std::vector<int64_t>> rank_indices, int64_t local_batch);

  int64_t num_steps() const { return num_steps_; }
  int64_t num_ranks() const { return static_cast<int64_t>(rank_indices_.size()); }
  // Rank r's s-th local batch; the last one may be short (DataLoader drop_last=False).
  std::vector<int64_t> local_batch(int64_t step, int64_t rank) const;
  // Concatenation over ranks in rank order of local_batch(step, r).
  std::vector<int64_t> global_batch(int64_t step) const;
  const std::vector<int64_t>& rank_indices(int64_t rank) const;

 private:
  std::vector<std::vector<int64_t>> rank_indices_;
  int64_t local_batch_;
  int64_t num_steps_;
};

class GlobalBatchPlan {
 public:
  // Throws InputError when global_batch <= 0 or is not divisible by the number of replicas.
  GlobalBatchPlan(SamplerOptions sampler, int64_t global_batch);

  int64_t global_batch() const { return global_batch_; }
  int64_t local_batch() const { return global_batch_ / sampler_.options().num_replicas; }
  int64_t num_replicas() const { return sampler_.options().num_replicas; }
  // Steps per epoch: ceil(num_samples / local_batch); every rank has the same count.
  int64_t steps_per_epoch() const;
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
