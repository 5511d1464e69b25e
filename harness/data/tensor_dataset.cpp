// tensor_dataset.cpp — see tensor_dataset.h.
#include "data/tensor_dataset.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "errors.h"

namespace ddpbench::data {

TensorDataset::TensorDataset(at::Tensor inputs, at::Tensor targets, std::string description)
    : inputs_(std::move(inputs)),
      targets_(std::move(targets)),
      description_(std::move(description)) {
  if (inputs_.size(0) != targets_.size(0)) {
    throw InputError(fmt::format("tensor dataset has {} inputs but {} targets", inputs_.size(0),
                                 targets_.size(0)));
  }
}

int64_t TensorDataset::size() const { return inputs_.size(0); }

Example TensorDataset::get(int64_t index, int64_t /*epoch*/) const {
  return {inputs_[index], targets_[index]};
}

}  // namespace ddpbench::data
