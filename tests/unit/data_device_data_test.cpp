// data_device_data_test.cpp — issue 77 item 1 on the CPU: a dataset materialised as one tensor
// and gathered and augmented by batched tensor operations gives, byte for byte, the batch that
// collate() makes sample by sample (inputs and labels), for CIFAR-10's pipeline (RandomCrop with
// padding, RandomHorizontalFlip, Normalize) and Fashion-MNIST's (one channel, no augmentation),
// over several epochs and index lists with repeats (DistributedSampler's padding); a dataset with
// no device form yet says so.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "data/device_data.h"
#include "data/image_dataset.h"
#include "data/synthetic_cifar.h"
#include "data/synthetic_tokens.h"
#include "scenarios/cifar_data.h"

namespace ddpbench::data {
namespace {

void expect_collate_bytes(const Dataset& dataset) {
  const std::unique_ptr<DeviceData> on_device = materialise(dataset, c10::Device(c10::kCPU));
  ASSERT_NE(on_device, nullptr);
  const std::vector<std::vector<int64_t>> lists = {
      {0}, {5, 3, 17, 3, 0, 63}, {63, 62, 61, 60, 1, 2, 40, 41, 42, 9, 9, 9}};
  for (int64_t epoch : {0, 1, 7}) {
    for (const std::vector<int64_t>& indices : lists) {
      const Batch want = collate(dataset, indices, epoch);
      const Batch got = on_device->batch(indices, epoch);
      ASSERT_EQ(got.inputs.sizes(), want.inputs.sizes());
      EXPECT_EQ(got.inputs.scalar_type(), want.inputs.scalar_type());
      EXPECT_TRUE(at::equal(got.inputs, want.inputs))
          << "epoch " << epoch << ", max |diff| "
          << (got.inputs - want.inputs).abs().max().item<float>();
      EXPECT_TRUE(at::equal(got.targets, want.targets)) << "epoch " << epoch;
      EXPECT_EQ(got.targets.scalar_type(), at::kLong);
    }
  }
}

TEST(DeviceData, CifarCropFlipNormalizeIsCollatesBatchByteForByte) {
  // cifar_resnet18's pipeline: RandomCrop(32, padding=4), RandomHorizontalFlip, Normalize.
  expect_collate_bytes(
      ImageDataset(std::make_shared<SyntheticCifar>(64, 3), scenarios::cifar_train_transform(3)));
}

TEST(DeviceData, OneChannelWithoutAugmentationIsCollatesBatchByteForByte) {
  std::vector<uint8_t> pixels(64 * 28 * 28);
  std::vector<int64_t> labels(64);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>((i * 37) % 256);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int64_t>(i % 10);
  auto images = std::make_shared<InMemoryImages>(std::move(pixels), std::move(labels),
                                                 ImageShape{1, 28, 28}, 10, "fashion-like");
  expect_collate_bytes(ImageDataset(images, ImageTransformOptions{}));
  ImageTransformOptions flip_only;
  flip_only.random_flip = true;
  flip_only.mean = {0.2860F};
  flip_only.stddev = {0.3530F};
  expect_collate_bytes(ImageDataset(images, flip_only));
}

TEST(DeviceData, ADatasetWithoutADeviceFormSaysWhy) {
  const SyntheticTokens tokens(SyntheticTokensOptions{}, 0);
  EXPECT_EQ(materialise(tokens, c10::Device(c10::kCPU)), nullptr);
  EXPECT_NE(why_not_on_device(tokens).find("has no device form yet"), std::string::npos);
}

}  // namespace
}  // namespace ddpbench::data
