// device_samples.h — a dataset that is the same every epoch, materialised on the device as its
// samples are: samples of one shape stacked (a batch is one index_select, collate's at::stack),
// token sequences concatenated with their offsets (a batch is one gather that reads the padding
// from a zero token kept after the last one, collate's right-padding with 0) (device_data.h).
#pragma once

#include <c10/core/Device.h>

#include <memory>

#include "data/dataset.h"
#include "data/device_data.h"

namespace ddpbench::data {

// Requires dataset.same_every_epoch().
std::unique_ptr<DeviceData> samples_on_device(const Dataset& dataset, c10::Device device);

}  // namespace ddpbench::data
