// dataset.h — the dataset interface every mode reads through. A dataset maps (index, epoch) to
// one example deterministically and thread-safely: epoch-dependent randomness (augmentation) is
// keyed, so any mode, rank or thread asking for the same (index, epoch) gets identical tensors.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::data {

struct Example {
  at::Tensor input;   // float32, e.g. [C, H, W] or [features]
  at::Tensor target;  // int64 scalar class label, or a float32 tensor for regression
};

struct Batch {
  at::Tensor inputs;   // [B, ...]
  at::Tensor targets;  // [B] or [B, ...]
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual Example get(int64_t index, int64_t epoch) const = 0;
  // One line for run headers and reports, e.g. "synthetic CIFAR-10 (50000 samples, seed 0)".
  virtual std::string describe() const = 0;
};

// Loads `indices` in the given order and stacks them into one batch.
Batch collate(const Dataset& dataset, const std::vector<int64_t>& indices, int64_t epoch);

}  // namespace ddpbench::data
