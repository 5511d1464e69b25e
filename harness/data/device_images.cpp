// device_images.cpp — see device_images.h.
#include "data/device_images.h"

#include <ATen/ATen.h>

namespace ddpbench::data {
namespace {

// An ImageDataset on the device. transform_image reads output pixel (y, x) of a sample from
// row y + offset_y - pad and column (flip ? W-1-x : x) + offset_x - pad of the image, zero
// outside; here every image is stored inside its zero fill, so that pixel is padded row
// y + offset_y and padded column (flip ? W-1-x : x) + offset_x: one gather per batch.
class DeviceImages : public DeviceData {
 public:
  DeviceImages(const ImageDataset& dataset, c10::Device device)
      : transform_(dataset.transform()), shape_(dataset.source().shape()), device_(device) {
    const ImageSource& source = dataset.source();
    const int64_t n = source.size();
    const int64_t pad = transform_.crop_padding;
    at::Tensor images = at::empty({n, shape_.channels, shape_.height, shape_.width}, at::kByte);
    at::Tensor labels = at::empty({n}, at::kLong);
    auto* pixel = images.data_ptr<uint8_t>();
    auto* label = labels.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) label[i] = source.read(i, pixel + i * shape_.numel());
    padded_ = at::constant_pad_nd(images, {pad, pad, pad, pad}, 0).to(device_);
    labels_ = labels.to(device_);
    const auto on_device = at::TensorOptions().dtype(at::kFloat).device(device_);
    // Tensors, not scalars: CUDA divides by a host scalar as a multiplication by its reciprocal,
    // which rounds otherwise than transform_image's division.
    divisor_ = at::full({1}, 255.0F, on_device);
    if (!transform_.mean.empty()) {
      mean_ = at::tensor(transform_.mean).view({1, shape_.channels, 1, 1}).to(on_device);
      stddev_ = at::tensor(transform_.stddev).view({1, shape_.channels, 1, 1}).to(on_device);
    }
    const auto index = at::TensorOptions().dtype(at::kLong).device(device_);
    rows_ = at::arange(shape_.height, index);
    columns_ = at::arange(shape_.width, index);
    mirrored_ = at::arange(shape_.width - 1, -1, -1, index);
    channels_ = at::arange(shape_.channels, index).view({1, shape_.channels, 1, 1});
  }

  Batch batch(const std::vector<int64_t>& indices, int64_t epoch,
              int64_t /*pad_to*/) const override {
    const auto b = static_cast<int64_t>(indices.size());
    // The keyed draws on the host (three numbers a sample), then one copy.
    at::Tensor draws = at::empty({3, b}, at::kLong);
    auto* d = draws.data_ptr<int64_t>();
    for (int64_t i = 0; i < b; ++i) {
      const AugmentDraw a = draw_augmentation(transform_, epoch, indices[static_cast<size_t>(i)]);
      d[i] = a.offset_y;
      d[b + i] = a.offset_x;
      d[2 * b + i] = a.flip ? 1 : 0;
    }
    draws = draws.to(device_);
    const at::Tensor samples =
        at::tensor(indices, at::TensorOptions().dtype(at::kLong)).to(device_);
    const at::Tensor rows = draws[0].view({b, 1}) + rows_.view({1, -1});
    const at::Tensor columns =
        draws[1].view({b, 1}) + at::where(draws[2].view({b, 1}).to(at::kBool),
                                          mirrored_.view({1, -1}), columns_.view({1, -1}));
    const at::Tensor pixels =
        padded_.index({samples.view({b, 1, 1, 1}), channels_, rows.view({b, 1, shape_.height, 1}),
                       columns.view({b, 1, 1, shape_.width})});
    at::Tensor inputs = pixels.to(at::kFloat).div_(divisor_);
    if (mean_.defined()) inputs = inputs.sub_(mean_).div_(stddev_);
    return {inputs.contiguous(), labels_.index_select(0, samples)};
  }

  int64_t bytes() const override {
    return padded_.numel() * padded_.element_size() + labels_.numel() * labels_.element_size();
  }

 private:
  ImageTransformOptions transform_;
  ImageShape shape_;
  c10::Device device_;
  at::Tensor padded_;  // uint8 [N, C, H + 2 pad, W + 2 pad]
  at::Tensor labels_;  // int64 [N]
  at::Tensor divisor_, mean_, stddev_;
  at::Tensor rows_, columns_, mirrored_, channels_;
};

}  // namespace

std::unique_ptr<DeviceData> images_on_device(const ImageDataset& dataset, c10::Device device) {
  return std::make_unique<DeviceImages>(dataset, device);
}

}  // namespace ddpbench::data
