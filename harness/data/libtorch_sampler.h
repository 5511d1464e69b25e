// libtorch_sampler.h — partitions from libtorch C++'s own DistributedRandomSampler /
// DistributedSequentialSampler, shown by `ddpbench sampler --impl libtorch` for comparison.
// They are NOT what Python's DistributedSampler produces (contiguous blocks per rank, padding
// added before an mt19937 shuffle seeded by the epoch alone), which is why ddpbench ships its own.
#pragma once

#include <cstdint>
#include <vector>

namespace ddpbench::data {

struct LibtorchSamplerOptions {
  int64_t dataset_size = 0;
  int64_t num_replicas = 1;
  bool shuffle = true;
  bool drop_last = false;  // maps to allow_duplicates = !drop_last
  int64_t epoch = 0;
};

// One index list per rank, exactly as libtorch's samplers yield them.
std::vector<std::vector<int64_t>> libtorch_partitions(const LibtorchSamplerOptions& options);

}  // namespace ddpbench::data
