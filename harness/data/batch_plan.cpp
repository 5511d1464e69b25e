// batch_plan.cpp — see batch_plan.h. Because rank r's indices are order[r::K], the union of the
// ranks' s-th local batches is exactly order[s*B : (s+1)*B] when K divides B;
// tests/unit/data_batch_plan_test.cpp proves it for every step, including the short last one, and
// that uneven local batches still cover every rank's share once.
#include "data/batch_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "errors.h"

namespace ddpbench::data {

std::vector<int64_t> split_sizes(int64_t total, int64_t parts) {
  std::vector<int64_t> sizes(static_cast<size_t>(parts), total / parts);
  for (int64_t r = 0; r < total % parts; ++r) ++sizes[static_cast<size_t>(r)];
  return sizes;
}

EpochPlan::EpochPlan(std::vector<std::vector<int64_t>> rank_indices,
                     std::vector<int64_t> local_batches)
    : rank_indices_(std::move(rank_indices)), local_batches_(std::move(local_batches)) {
  for (size_t r = 0; r < rank_indices_.size(); ++r) {
    const auto mine = static_cast<int64_t>(rank_indices_[r].size());
    num_steps_ = std::max(num_steps_, (mine + local_batches_[r] - 1) / local_batches_[r]);
  }
}

std::vector<int64_t> EpochPlan::local_batch(int64_t step, int64_t rank) const {
  const auto& mine = rank_indices(rank);
  if (step < 0 || step >= num_steps_) {
    throw InputError(fmt::format("step {} is outside the epoch's {} steps", step, num_steps_));
  }
  const int64_t b = local_batches_[static_cast<size_t>(rank)];
  const auto size = static_cast<int64_t>(mine.size());
  const int64_t begin = std::min(step * b, size);  // past the end: the rank has joined
  const int64_t end = std::min(begin + b, size);
  return {mine.begin() + begin, mine.begin() + end};
}

std::vector<int64_t> EpochPlan::chunk_sizes(int64_t step) const {
  std::vector<int64_t> sizes;
  for (int64_t r = 0; r < num_ranks(); ++r) {
    const auto size = static_cast<int64_t>(rank_indices(r).size());
    const int64_t b = local_batches_[static_cast<size_t>(r)];
    sizes.push_back(std::clamp<int64_t>(size - step * b, 0, b));
  }
  return sizes;
}

bool EpochPlan::uneven() const {
  return std::adjacent_find(local_batches_.begin(), local_batches_.end(), std::not_equal_to<>()) !=
         local_batches_.end();
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
  if (global_batch_ < k) {
    throw InputError(fmt::format(
        "global batch {} leaves some of the {} ranks without a sample per step: pick a batch of at "
        "least {}",
        global_batch_, k, k));
  }
  local_batches_ = split_sizes(global_batch_, k);
  if (sampler_.num_samples() == 0) {
    throw InputError(
        fmt::format("dataset of {} samples leaves no sample per rank for {} ranks with drop_last",
                    sampler.dataset_size, k));
  }
}

int64_t GlobalBatchPlan::steps_per_epoch() const {
  return rank_steps_per_epoch(num_replicas() - 1);  // the last rank's batch is the smallest
}

int64_t GlobalBatchPlan::rank_steps_per_epoch(int64_t rank) const {
  const int64_t b = local_batches_.at(static_cast<size_t>(rank));
  return (sampler_.num_samples() + b - 1) / b;
}

StepPosition GlobalBatchPlan::locate(int64_t global_step) const {
  const int64_t per_epoch = steps_per_epoch();
  return {global_step / per_epoch, global_step % per_epoch};
}

int64_t GlobalBatchPlan::samples_at(int64_t global_step) const {
  const int64_t in_epoch = locate(global_step).step_in_epoch;
  int64_t samples = 0;
  for (const int64_t b : local_batches_) {
    samples += std::clamp<int64_t>(sampler_.num_samples() - in_epoch * b, 0, b);
  }
  return samples;
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
  return EpochPlan(s.all_indices(), local_batches_);
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
