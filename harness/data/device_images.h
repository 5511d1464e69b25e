// device_images.h — an image dataset on the device: its uint8 pixels stored inside RandomCrop's
// zero fill, each batch one gather (every sample's keyed crop offsets and flip as row and column
// indices), a division by 255 and Normalize, byte for byte transform_image's (device_data.h).
#pragma once

#include <c10/core/Device.h>

#include <memory>

#include "data/device_data.h"
#include "data/image_dataset.h"

namespace ddpbench::data {

std::unique_ptr<DeviceData> images_on_device(const ImageDataset& dataset, c10::Device device);

}  // namespace ddpbench::data
