// token_sequences.cpp — see token_sequences.h.
#include "data/token_sequences.h"

#include <ATen/ATen.h>

namespace ddpbench::data {

void TokenSequences::add(const std::vector<int64_t>& ids, int64_t label) {
  for (int64_t id : ids) ids_.push_back(static_cast<int32_t>(id));
  offsets_.push_back(static_cast<int64_t>(ids_.size()));
  labels_.push_back(label);
}

Example TokenSequences::get(int64_t index, int64_t /*epoch*/) const {
  const auto i = static_cast<size_t>(index);
  const int64_t begin = offsets_.at(i);
  const int64_t length = offsets_.at(i + 1) - begin;
  at::Tensor input = at::empty({length}, at::kLong);
  int64_t* out = input.data_ptr<int64_t>();
  for (int64_t t = 0; t < length; ++t) out[t] = ids_[static_cast<size_t>(begin + t)];
  return {input, at::scalar_tensor(labels_.at(i), at::kLong)};
}

std::optional<int64_t> TokenSequences::sequence_length(int64_t index) const {
  const auto i = static_cast<size_t>(index);
  return offsets_.at(i + 1) - offsets_.at(i);
}

}  // namespace ddpbench::data
