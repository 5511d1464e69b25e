// dataset.cpp — batch assembly shared by every mode (the data path is common by design; the
// gradient paths are not). Casting and placement are the execution context's (runtime/).
#include "data/dataset.h"

#include <ATen/ATen.h>

namespace ddpbench::data {

Batch collate(const Dataset& dataset, const std::vector<int64_t>& indices, int64_t epoch) {
  std::vector<at::Tensor> inputs;
  std::vector<at::Tensor> targets;
  inputs.reserve(indices.size());
  targets.reserve(indices.size());
  for (int64_t i : indices) {
    Example e = dataset.get(i, epoch);
    inputs.push_back(std::move(e.input));
    targets.push_back(std::move(e.target));
  }
  return {at::stack(inputs), at::stack(targets)};
}

}  // namespace ddpbench::data
