// distributed_sampler.h — a bit-exact port of PyTorch's Python DistributedSampler
// (torch/utils/data/distributed.py, torch 1.13). Partitions drive every mode's data, so the rules
// (num_samples, padding from the head of the shuffled list, drop_last truncation, strided
// subsampling, seed + epoch shuffling) must match Python exactly; tests compare against the oracle.
#pragma once

#include <cstdint>
#include <vector>

namespace ddpbench::data {

struct SamplerOptions {
  int64_t dataset_size = 0;  // N, must be > 0
  int64_t num_replicas = 1;  // K, must be > 0
  bool shuffle = true;       // Python's default
  int64_t seed = 0;          // Python's default; the generator is seeded seed + epoch
  bool drop_last = false;    // drop the tail instead of padding with duplicates
};

class DistributedSampler {
 public:
  // Throws InputError for K <= 0, N <= 0 or a negative seed.
  explicit DistributedSampler(SamplerOptions options);

  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }
  const SamplerOptions& options() const { return options_; }

  // Samples per rank per epoch (Python's `num_samples`).
  int64_t num_samples() const { return num_samples_; }
  // num_samples * K (Python's `total_size`).
  int64_t total_size() const { return num_samples_ * options_.num_replicas; }
  // Samples repeated to make the epoch divisible by K (0 with drop_last).
  int64_t padded_count() const;
  // Samples left out of the epoch (0 without drop_last).
  int64_t dropped_count() const;

  // The epoch's full index list of length total_size, before the strided split across ranks.
  std::vector<int64_t> epoch_order() const;
  // Python's `list(iter(sampler))` for `rank`: epoch_order()[rank : total_size : K].
  // Throws InputError for a rank outside [0, K).
  std::vector<int64_t> indices(int64_t rank) const;
  // All ranks at once (one shuffle instead of K).
  std::vector<std::vector<int64_t>> all_indices() const;
  // Whether rank's j-th index is a padding duplicate: it sits at position rank + j*K of the
  // epoch order, and positions >= N are padding (never with drop_last, which has none).
  bool is_padding(int64_t rank, int64_t j) const {
    return rank + j * options_.num_replicas >= options_.dataset_size;
  }

 private:
  SamplerOptions options_;
  int64_t num_samples_ = 0;
  int64_t epoch_ = 0;
};

}  // namespace ddpbench::data
