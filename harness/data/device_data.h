// device_data.h — a dataset materialised once on the run's device, whose batches are gathered
// (and, for images, augmented) there by a few batched tensor operations instead of collated sample
// by sample on the host (issue 77 item 1: on the only GPU run, cifar_resnet18's data phase took
// 5.6 ms of a 13.3 ms step while the GPU waited). Each batch is byte for byte the one collate()
// makes from the same indices, epoch and padded length, so the CPU proves it
// (tests/unit/data_device_data_test.cpp) and a GPU only measures it.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace ddpbench::data {

class DeviceData {
 public:
  virtual ~DeviceData() = default;
  // collate(dataset, indices, epoch, pad_to)'s batch, built on the device it was materialised on.
  virtual Batch batch(const std::vector<int64_t>& indices, int64_t epoch,
                      int64_t pad_to) const = 0;
  // Bytes it holds on the device.
  virtual int64_t bytes() const = 0;
};

// `dataset` materialised on `device`, or null for a dataset without a device form; why_not says
// why (empty: it has one). Image datasets (synthetic CIFAR-10, CIFAR-10 files, Fashion-MNIST) keep
// their uint8 pixels inside RandomCrop's zero fill and augment on the device (device_images.h);
// a dataset the same every epoch (--data tensors, token sequences, text) keeps its samples as
// they are (device_samples.h).
std::unique_ptr<DeviceData> materialise(const Dataset& dataset, c10::Device device);
std::string why_not_on_device(const Dataset& dataset);

// One process's device form of its dataset, materialised at the first call and shared by every
// loop of the process: a lockstep rank 0 runs the judged loop, the exact reference and the
// rounding floor's twin over one dataset, and one copy on the device serves them all.
class SharedDeviceData {
 public:
  SharedDeviceData(std::shared_ptr<const Dataset> dataset, c10::Device device)
      : dataset_(std::move(dataset)), device_(device) {}
  // Null when the dataset has no device form (its batches are collated on the host).
  const DeviceData* get() const;

 private:
  std::shared_ptr<const Dataset> dataset_;
  c10::Device device_;
  mutable std::once_flag once_;
  mutable std::unique_ptr<DeviceData> data_;
};

}  // namespace ddpbench::data
