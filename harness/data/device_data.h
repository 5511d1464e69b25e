// device_data.h — a dataset materialised once on the run's device, whose batches are gathered
// and augmented there by a few batched tensor operations instead of collated sample by sample on
// the host (issue 77 item 1: on the only GPU run, cifar_resnet18's data phase took 5.6 ms of a
// 13.3 ms step while the GPU waited). Each batch is byte for byte the one collate() makes from
// the same indices and epoch: the same keyed draws (draw_augmentation), the same float32
// operations in the same order, so the CPU proves it (tests/unit/data_device_data_test.cpp) and
// a GPU only measures it.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace ddpbench::data {

class DeviceData {
 public:
  virtual ~DeviceData() = default;
  // collate(dataset, indices, epoch)'s batch, built on the device it was materialised on.
  virtual Batch batch(const std::vector<int64_t>& indices, int64_t epoch) const = 0;
  // Bytes it holds on the device.
  virtual int64_t bytes() const = 0;
};

// `dataset` materialised on `device`: image datasets (synthetic CIFAR-10, CIFAR-10 files,
// Fashion-MNIST) as their uint8 pixels with RandomCrop's zero fill around them, the labels beside.
// Null for a dataset without a device form yet; why_not says why.
std::unique_ptr<DeviceData> materialise(const Dataset& dataset, c10::Device device);
std::string why_not_on_device(const Dataset& dataset);

}  // namespace ddpbench::data
