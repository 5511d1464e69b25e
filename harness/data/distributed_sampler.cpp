// distributed_sampler.cpp — see distributed_sampler.h. Each rule below cites the Python line it
// mirrors, because "almost the same as PyTorch" is the bug this file exists to prevent.
#include "data/distributed_sampler.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include "errors.h"

namespace ddpbench::data {

DistributedSampler::DistributedSampler(SamplerOptions options) : options_(options) {
  if (options_.num_replicas <= 0) {
    throw InputError(fmt::format(
        "invalid number of replicas {}: it must be at least 1 (pass --replicas K with K >= 1)",
        options_.num_replicas));
  }
  if (options_.dataset_size <= 0) {
    throw InputError(
        fmt::format("dataset size {} is empty: DistributedSampler needs at least one sample",
                    options_.dataset_size));
  }
  if (options_.seed < 0) {
    throw InputError(fmt::format("seed {} is negative: pass a seed >= 0", options_.seed));
  }
  const int64_t n = options_.dataset_size;
  const int64_t k = options_.num_replicas;
  if (options_.drop_last && n % k != 0) {
    // Python: math.ceil((len(dataset) - num_replicas) / num_replicas), i.e. floor(N / K).
    num_samples_ = n / k;
  } else {
    // Python: math.ceil(len(dataset) / num_replicas)
    num_samples_ = (n + k - 1) / k;
  }
}

int64_t DistributedSampler::padded_count() const {
  return options_.drop_last ? 0 : total_size() - options_.dataset_size;
}

int64_t DistributedSampler::dropped_count() const {
  return options_.drop_last ? options_.dataset_size - total_size() : 0;
}

std::vector<int64_t> DistributedSampler::epoch_order() const {
  const int64_t n = options_.dataset_size;
  std::vector<int64_t> order;
  order.reserve(static_cast<size_t>(std::max(n, total_size())));
  if (options_.shuffle) {
    // Python: g = torch.Generator(); g.manual_seed(self.seed + self.epoch); torch.randperm(N, g)
    auto gen =
        at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(options_.seed + epoch_));
    const at::Tensor perm = at::randperm(n, gen, at::TensorOptions().dtype(at::kLong));
    const int64_t* p = perm.data_ptr<int64_t>();
    order.assign(p, p + n);
  } else {
    for (int64_t i = 0; i < n; ++i) order.push_back(i);
  }

  const int64_t total = total_size();
  if (!options_.drop_last) {
    // Python: padding comes from the head of the (shuffled) list, repeated whole when the
    // padding is longer than the list — duplicates of real samples, never zeros.
    const int64_t padding = total - n;
    for (int64_t i = 0; i < padding; ++i) order.push_back(order[static_cast<size_t>(i % n)]);
  } else {
    // Python: indices = indices[:self.total_size]
    order.resize(static_cast<size_t>(total));
  }
  return order;
}

std::vector<int64_t> DistributedSampler::indices(int64_t rank) const {
  if (rank < 0 || rank >= options_.num_replicas) {
    throw InputError(
        fmt::format("invalid rank {}: it must be in [0, {}]", rank, options_.num_replicas - 1));
  }
  const std::vector<int64_t> order = epoch_order();
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(num_samples_));
  // Python: indices[self.rank:self.total_size:self.num_replicas]
  for (int64_t i = rank; i < total_size(); i += options_.num_replicas) {
    mine.push_back(order[static_cast<size_t>(i)]);
  }
  return mine;
}

std::vector<std::vector<int64_t>> DistributedSampler::all_indices() const {
  const std::vector<int64_t> order = epoch_order();
  const int64_t k = options_.num_replicas;
  std::vector<std::vector<int64_t>> ranks(static_cast<size_t>(k));
  for (auto& r : ranks) r.reserve(static_cast<size_t>(num_samples_));
  for (int64_t i = 0; i < total_size(); ++i) {
    ranks[static_cast<size_t>(i % k)].push_back(order[static_cast<size_t>(i)]);
  }
  return ranks;
}

}  // namespace ddpbench::data
