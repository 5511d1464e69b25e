// device_data.cpp — see device_data.h: which device form a dataset takes.
#include "data/device_data.h"

#include "data/device_images.h"
#include "data/device_samples.h"
#include "data/image_dataset.h"

namespace ddpbench::data {

std::string why_not_on_device(const Dataset& dataset) {
  if (dynamic_cast<const ImageDataset*>(&dataset) != nullptr || dataset.same_every_epoch()) {
    return "";
  }
  return dataset.describe() +
         " has no device form (its samples change with the epoch, and only image augmentation"
         " has a device form)";
}

std::unique_ptr<DeviceData> materialise(const Dataset& dataset, c10::Device device) {
  if (const auto* images = dynamic_cast<const ImageDataset*>(&dataset)) {
    return images_on_device(*images, device);
  }
  if (dataset.same_every_epoch()) return samples_on_device(dataset, device);
  return nullptr;
}

const DeviceData* SharedDeviceData::get() const {
  std::call_once(once_, [this] { data_ = materialise(*dataset_, device_); });
  return data_.get();
}

}  // namespace ddpbench::data
