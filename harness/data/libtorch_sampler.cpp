// libtorch_sampler.cpp — drives the real libtorch samplers; see libtorch_sampler.h for why.
#include "data/libtorch_sampler.h"

#include <fmt/format.h>
#include <torch/data/samplers/distributed.h>

#include "errors.h"

namespace ddpbench::data {
namespace {

template <typename Sampler>
std::vector<int64_t> drain(Sampler& sampler) {
  std::vector<int64_t> out;
  while (auto batch = sampler.next(1024)) {
    for (size_t i : *batch) out.push_back(static_cast<int64_t>(i));
  }
  return out;
}

}  // namespace

std::vector<std::vector<int64_t>> libtorch_partitions(const LibtorchSamplerOptions& options) {
  if (options.num_replicas <= 0 || options.dataset_size <= 0 || options.epoch < 0) {
    throw InputError(fmt::format(
        "libtorch sampler needs dataset size >= 1, replicas >= 1 and epoch >= 0 (got {}, {}, {})",
        options.dataset_size, options.num_replicas, options.epoch));
  }
  const auto n = static_cast<size_t>(options.dataset_size);
  const auto k = static_cast<size_t>(options.num_replicas);
  const bool allow_duplicates = !options.drop_last;
  std::vector<std::vector<int64_t>> ranks;
  for (size_t r = 0; r < k; ++r) {
    if (options.shuffle) {
      torch::data::samplers::DistributedRandomSampler s(n, k, r, allow_duplicates);
      s.set_epoch(static_cast<size_t>(options.epoch));
      s.reset();
      ranks.push_back(drain(s));
    } else {
      torch::data::samplers::DistributedSequentialSampler s(n, k, r, allow_duplicates);
      s.set_epoch(static_cast<size_t>(options.epoch));
      s.reset();
      ranks.push_back(drain(s));
    }
  }
  return ranks;
}

}  // namespace ddpbench::data
