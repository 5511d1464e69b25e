// image_dataset.cpp — see image_dataset.h.
#include "data/image_dataset.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "errors.h"

namespace ddpbench::data {

ImageDataset::ImageDataset(std::shared_ptr<const ImageSource> source,
                           ImageTransformOptions transform)
    : source_(std::move(source)), transform_(std::move(transform)) {
  const auto channels = static_cast<size_t>(source_->shape().channels);
  if (!transform_.mean.empty() &&
      (transform_.mean.size() != channels || transform_.stddev.size() != channels)) {
    throw InputError(
        fmt::format("{}: normalisation needs {} means and stddevs", source_->describe(), channels));
  }
}

Example ImageDataset::get(int64_t index, int64_t epoch) const {
  std::vector<uint8_t> raw(static_cast<size_t>(source_->shape().numel()));
  const int64_t label = source_->read(index, raw.data());
  return {transform_image(raw.data(), source_->shape(), transform_, epoch, index),
          at::scalar_tensor(label, at::kLong)};
}

std::string ImageDataset::describe() const {
  std::string aug;
  if (transform_.crop_padding > 0)
    aug += fmt::format(", RandomCrop(pad {})", transform_.crop_padding);
  if (transform_.random_flip) aug += ", RandomHorizontalFlip";
  return source_->describe() + aug;
}

}  // namespace ddpbench::data
