// randn_regression.cpp — see randn_regression.h.
#include "scenarios/randn_regression.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include "data/tensor_dataset.h"

namespace ddpbench::scenarios {

std::shared_ptr<const data::Dataset> make_randn_regression(int64_t samples, int64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed));
  at::Tensor inputs = at::randn({samples, 10}, gen);
  at::Tensor targets = at::randn({samples, 10}, gen);
  return std::make_shared<data::TensorDataset>(
      inputs, targets, fmt::format("randn({0},10) -> randn({0},10) ({0} samples)", samples));
}

}  // namespace ddpbench::scenarios
