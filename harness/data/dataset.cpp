// dataset.cpp — batch assembly shared by every mode (the data path is common by design; the
// gradient paths are not). Casting and placement are the execution context's (runtime/).
#include "data/dataset.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace ddpbench::data {
namespace {

bool holds_sequences(const Dataset& dataset, const std::vector<int64_t>& indices) {
  return !indices.empty() && dataset.sequence_length(indices.front()).has_value();
}

// Right-pads every sequence with 0 to `pad_to` (at least the longest) and stacks them.
at::Tensor pad_and_stack(const std::vector<at::Tensor>& sequences, int64_t pad_to) {
  int64_t longest = 0;
  for (const auto& s : sequences) longest = std::max(longest, s.size(0));
  pad_to = batch_padded_length(longest, pad_to);
  at::Tensor out = at::zeros({static_cast<int64_t>(sequences.size()), pad_to}, at::kLong);
  for (size_t i = 0; i < sequences.size(); ++i) {
    out[static_cast<int64_t>(i)].narrow(0, 0, sequences[i].size(0)).copy_(sequences[i]);
  }
  return out;
}

}  // namespace

int64_t padded_length(const Dataset& dataset, const std::vector<int64_t>& global_batch) {
  if (!holds_sequences(dataset, global_batch)) return 0;
  int64_t longest = 0;
  for (int64_t i : global_batch)
    longest = std::max(longest, dataset.sequence_length(i).value_or(0));
  return longest;
}

int64_t batch_padded_length(int64_t longest, int64_t pad_to) {
  if (pad_to >= longest) return pad_to;
  if (pad_to > 0) {
    throw std::logic_error(
        fmt::format("a sequence of {} tokens does not fit the padded length {}", longest, pad_to));
  }
  return longest;
}

Batch collate(const Dataset& dataset, const std::vector<int64_t>& indices, int64_t epoch,
              int64_t pad_to) {
  std::vector<at::Tensor> inputs;
  std::vector<at::Tensor> targets;
  inputs.reserve(indices.size());
  targets.reserve(indices.size());
  for (int64_t i : indices) {
    Example e = dataset.get(i, epoch);
    inputs.push_back(std::move(e.input));
    targets.push_back(std::move(e.target));
  }
  if (holds_sequences(dataset, indices)) return {pad_and_stack(inputs, pad_to), at::stack(targets)};
  return {at::stack(inputs), at::stack(targets)};
}

}  // namespace ddpbench::data
