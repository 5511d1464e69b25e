// batch_plan.cpp — see batch_plan.h. Because rank r's indices are order[r::K], the union of the
// ranks' s-th local batches is exactly order[s*B : (s+1)*B]; tests/unit/data_batch_plan_test.cpp
// proves it for every step, including the short last one.
#include "data/batch_plan.h"

#include <fmt/format.h>

#include <algorithm>

#include "errors.h"

namespace ddpbench::data {

EpochPlan::EpochPlan(std::vector<std::vector<int64_t>> rank_indices, int64_t local_batch)
    : rank_indices_(std::move(rank_indices)), local_batch_(local_batch) {
  const auto per_rank = static_cast<int64_t>(rank_indices_.empty() ? 0 : rank_indices_[0].size());
  num_steps_ = (per_rank + local_batch_ - 1) / local_batch_;
}

std::vector<int64_t> EpochPlan::local_batch(int64_t step, int64_t rank) const {
  const auto& mine = rank_indices(rank);
  const int64_t begin = step * local_batch_;
  const int64_t end = std::min<int64_t>(begin + local_batch_, static_cast<int64_t>(mine.size()));
  if (step < 0 || begin >= end) {
    throw InputError(fmt::format("step {} is outside the epoch's {} steps", step, num_steps_));
  }
  return {mine.begin() + begin, mine.begin() + end};
}

std::vector<int64_t> EpochPlan::global_batch(int64_t step) const {
  std::vector<int64_t> out;
  for (int64_t r = 0; r < num_ranks(); ++r) {
    const auto part = local_batch(step, r);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

const std::vector<int64_t>& EpochPlan::rank_indices(int64_t rank) const {
  if (rank < 0 || rank >= num_ranks()) {
    throw InputError(fmt::format("rank {} is outside [0, {})", rank, num_ranks()));
  }
  return rank_indices_[static_cast<size_t>(rank)];
}

GlobalBatchPlan::GlobalBatchPlan(SamplerOptions sampler, int64_t global_batch)
    : sampler_(sampler), global_batch_(global_batch) {
  const int64_t k = sampler_.options().num_replicas;
  if (global_batch_ <= 0) {
    throw InputError(fmt::format("batch size {} must be positive", global_batch_));
  }
  if (global_batch_ % k != 0) {
    throw InputError(fmt::format(
        "global batch {} is not divisible by world size {}: pick a batch that is a multiple of {}",
        global_batch_, k, k));
  }
  if (sampler_.num_samples() == 0) {
    throw InputError(
        fmt::format("dataset of {} samples leaves no sample per rank for {} ranks with drop_last",
                    sampler.dataset_size, k));
  }
}

int64_t GlobalBatchPlan::steps_per_epoch() const {
  return (sampler_.num_samples() + local_batch() - 1) / local_batch();
}

StepPosition GlobalBatchPlan::locate(int64_t global_step) const {
  const int64_t per_epoch = steps_per_epoch();
  return {global_step / per_epoch, global_step % per_epoch};
}

int64_t GlobalBatchPlan::samples_at(int64_t global_step) const {
  const int64_t in_epoch = locate(global_step).step_in_epoch;
  const int64_t per_rank =
      std::min(local_batch(), sampler_.num_samples() - in_epoch * local_batch());
  return per_rank * num_replicas();
}

double GlobalBatchPlan::mean_samples_per_step(int64_t first_step, int64_t steps) const {
  if (steps <= 0) return 0.0;
  int64_t total = 0;
  for (int64_t s = first_step; s < first_step + steps; ++s) total += samples_at(s);
  return static_cast<double>(total) / static_cast<double>(steps);
}

EpochPlan GlobalBatchPlan::epoch(int64_t epoch) const {
  DistributedSampler s = sampler_;
  s.set_epoch(epoch);
  return EpochPlan(s.all_indices(), local_batch());
}

const EpochPlan& PlanCursor::seek(int64_t step, StepPosition& pos) {
  pos = plan_.locate(step);
  if (pos.epoch != current_epoch_) {
    epoch_.emplace(plan_.epoch(pos.epoch));
    current_epoch_ = pos.epoch;
  }
  return *epoch_;
}

}  // namespace ddpbench::data
