// device_samples.cpp — see device_samples.h.
#include "data/device_samples.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <numeric>

namespace ddpbench::data {
namespace {

// Samples [0, n) as collate stacks them (epoch 0: the dataset is the same every epoch).
std::vector<int64_t> every_index(const Dataset& dataset) {
  std::vector<int64_t> all(static_cast<size_t>(dataset.size()));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

at::Tensor sample_indices(const std::vector<int64_t>& indices, c10::Device device) {
  return at::tensor(indices, at::TensorOptions().dtype(at::kLong)).to(device);
}

// Samples of one shape: the stacked dataset; a batch is the rows it asks for.
class DeviceStacked : public DeviceData {
 public:
  DeviceStacked(const Dataset& dataset, c10::Device device) : device_(device) {
    const Batch all = collate(dataset, every_index(dataset), 0);
    inputs_ = all.inputs.to(device);
    targets_ = all.targets.to(device);
  }

  Batch batch(const std::vector<int64_t>& indices, int64_t /*epoch*/,
              int64_t /*pad_to*/) const override {
    const at::Tensor rows = sample_indices(indices, device_);
    return {inputs_.index_select(0, rows), targets_.index_select(0, rows)};
  }

  int64_t bytes() const override {
    return inputs_.numel() * inputs_.element_size() + targets_.numel() * targets_.element_size();
  }

 private:
  c10::Device device_;
  at::Tensor inputs_, targets_;
};

// Token sequences: every sample's ids one after another and one 0 after the last; token t of
// sample i is tokens[offset[i] + t] while t < length[i], else that 0 (collate's padding).
class DeviceSequences : public DeviceData {
 public:
  DeviceSequences(const Dataset& dataset, c10::Device device) : device_(device) {
    const int64_t n = dataset.size();
    std::vector<at::Tensor> sequences;
    std::vector<at::Tensor> targets;
    std::vector<int64_t> offsets;
    int64_t total = 0;
    for (int64_t i = 0; i < n; ++i) {
      Example e = dataset.get(i, 0);
      offsets.push_back(total);
      lengths_.push_back(e.input.size(0));
      total += e.input.size(0);
      sequences.push_back(std::move(e.input));
      targets.push_back(std::move(e.target));
    }
    sequences.push_back(at::zeros({1}, at::kLong));
    padding_index_ = total;
    tokens_ = at::cat(sequences).to(device);
    targets_ = at::stack(targets).to(device);
    offsets_ = at::tensor(offsets, at::TensorOptions().dtype(at::kLong)).to(device);
    lengths_on_device_ = at::tensor(lengths_, at::TensorOptions().dtype(at::kLong)).to(device);
  }

  Batch batch(const std::vector<int64_t>& indices, int64_t /*epoch*/,
              int64_t pad_to) const override {
    int64_t longest = 0;
    for (int64_t i : indices) longest = std::max(longest, lengths_.at(static_cast<size_t>(i)));
    pad_to = batch_padded_length(longest, pad_to);  // collate's rule
    const at::Tensor rows = sample_indices(indices, device_);
    const auto b = static_cast<int64_t>(indices.size());
    const at::Tensor position =
        at::arange(pad_to, at::TensorOptions().dtype(at::kLong).device(device_)).view({1, -1});
    const at::Tensor start = offsets_.index_select(0, rows).view({b, 1});
    const at::Tensor length = lengths_on_device_.index_select(0, rows).view({b, 1});
    const at::Tensor read =
        at::where(position < length, start + position, at::full_like(start, padding_index_));
    return {tokens_.index_select(0, read.reshape({-1})).view({b, pad_to}),
            targets_.index_select(0, rows)};
  }

  int64_t bytes() const override {
    int64_t sum = 0;
    for (const at::Tensor* t : {&tokens_, &targets_, &offsets_, &lengths_on_device_}) {
      sum += t->numel() * t->element_size();
    }
    return sum;
  }

 private:
  c10::Device device_;
  std::vector<int64_t> lengths_;  // on the host too: the padded length is decided there
  int64_t padding_index_ = 0;     // where the trailing 0 is
  at::Tensor tokens_, targets_, offsets_, lengths_on_device_;
};

}  // namespace

std::unique_ptr<DeviceData> samples_on_device(const Dataset& dataset, c10::Device device) {
  if (dataset.size() > 0 && dataset.sequence_length(0).has_value()) {
    return std::make_unique<DeviceSequences>(dataset, device);
  }
  return std::make_unique<DeviceStacked>(dataset, device);
}

}  // namespace ddpbench::data
