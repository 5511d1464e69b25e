// tensor_dataset.h — a dataset over two fixed tensors (inputs[i], targets[i]), for scenarios
// whose data is generated up front, like linear_mse's randn(20, 10) pair.
#pragma once

#include "data/dataset.h"

namespace ddpbench::data {

class TensorDataset : public Dataset {
 public:
  TensorDataset(at::Tensor inputs, at::Tensor targets, std::string description);
  int64_t size() const override;
  Example get(int64_t index, int64_t epoch) const override;
  bool same_every_epoch() const override { return true; }  // no augmentation
  std::string describe() const override { return description_; }

 private:
  at::Tensor inputs_;
  at::Tensor targets_;
  std::string description_;
};

}  // namespace ddpbench::data
