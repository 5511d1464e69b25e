// data_device_data_test.cpp — issue 77 item 1 on the CPU: a dataset materialised as one tensor
// and gathered and augmented by batched tensor operations gives, byte for byte, the batch that
// collate() makes sample by sample (inputs and labels), for CIFAR-10's pipeline (RandomCrop with
// padding, RandomHorizontalFlip, Normalize) and Fashion-MNIST's (one channel, no augmentation),
// over several epochs and index lists with repeats (DistributedSampler's padding); for datasets
// the same every epoch (fixed-shape tensors with class or regression targets, token sequences of
// varying length padded to their own longest or to a global batch's); a dataset whose samples
// change with the epoch and is no image dataset says it has no device form.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "data/device_data.h"
#include "data/image_dataset.h"
#include "data/synthetic_cifar.h"
#include "data/synthetic_text.h"
#include "data/synthetic_tokens.h"
#include "data/tensor_dataset.h"
#include "data/token_sequences.h"
#include "scenarios/cifar_data.h"

namespace ddpbench::data {
namespace {

void expect_equal_batches(const Batch& got, const Batch& want, int64_t epoch) {
  ASSERT_EQ(got.inputs.sizes(), want.inputs.sizes());
  EXPECT_EQ(got.inputs.scalar_type(), want.inputs.scalar_type());
  EXPECT_TRUE(at::equal(got.inputs, want.inputs))
      << "epoch " << epoch << ", max |diff| "
      << (got.inputs - want.inputs).abs().max().item<double>();
  ASSERT_EQ(got.targets.sizes(), want.targets.sizes());
  EXPECT_EQ(got.targets.scalar_type(), want.targets.scalar_type());
  EXPECT_TRUE(at::equal(got.targets, want.targets)) << "epoch " << epoch;
}

// `pad_to` 0: sequences padded to their own longest; else to that length, which bounds them.
void expect_collate_bytes(const Dataset& dataset, int64_t pad_to = 0) {
  const std::unique_ptr<DeviceData> on_device = materialise(dataset, c10::Device(c10::kCPU));
  ASSERT_NE(on_device, nullptr);
  const std::vector<std::vector<int64_t>> lists = {
      {0}, {5, 3, 17, 3, 0, 63}, {63, 62, 61, 60, 1, 2, 40, 41, 42, 9, 9, 9}};
  for (int64_t epoch : {0, 1, 7}) {
    for (const std::vector<int64_t>& indices : lists) {
      expect_equal_batches(on_device->batch(indices, epoch, pad_to),
                           collate(dataset, indices, epoch, pad_to), epoch);
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

// What the samples-as-they-are form relies on: the dataset really is the same every epoch.
void expect_same_every_epoch(const Dataset& dataset) {
  ASSERT_TRUE(dataset.same_every_epoch());
  for (int64_t i : {int64_t{0}, dataset.size() / 2, dataset.size() - 1}) {
    const Example first = dataset.get(i, 0);
    const Example later = dataset.get(i, 5);
    EXPECT_TRUE(at::equal(first.input, later.input)) << "sample " << i;
    EXPECT_TRUE(at::equal(first.target, later.target)) << "sample " << i;
  }
}

TEST(DeviceData, TensorsOfOneShapeAreCollatesBatchByteForByte) {
  const TensorDataset regression(at::randn({64, 10}, at::kDouble), at::randn({64, 2}, at::kDouble),
                                 "regression");
  expect_same_every_epoch(regression);
  expect_collate_bytes(regression);
  const SyntheticTokens tokens(SyntheticTokensOptions{}, 0);  // int64 [block] inputs and targets
  expect_same_every_epoch(tokens);
  expect_collate_bytes(tokens);
}

TEST(DeviceData, SequencesOfVaryingLengthAreCollatesPaddedBatchByteForByte) {
  TokenSequences sequences;
  for (int64_t i = 0; i < 64; ++i) {
    std::vector<int64_t> ids(static_cast<size_t>((i * 7) % 13));  // lengths 0 .. 12
    for (size_t t = 0; t < ids.size(); ++t) ids[t] = 1 + (i + static_cast<int64_t>(t)) % 50;
    sequences.add(ids, i % 2);
  }
  expect_same_every_epoch(sequences);
  expect_collate_bytes(sequences);      // each batch to its own longest
  expect_collate_bytes(sequences, 20);  // to a global batch's longest, past every shard's
  SyntheticTextOptions text;
  text.size = 64;
  text.vocab_size = 200;
  text.min_length = 3;
  text.max_length = 30;
  const SyntheticText imdb_like(text, 1);
  expect_same_every_epoch(imdb_like);
  expect_collate_bytes(imdb_like);
}

// Samples that change with the epoch, and no image augmentation to build on the device.
class EpochKeyed : public Dataset {
 public:
  int64_t size() const override { return 8; }
  Example get(int64_t index, int64_t epoch) const override {
    return {at::full({2}, static_cast<float>(index + epoch)), at::scalar_tensor(0, at::kLong)};
  }
  std::string describe() const override { return "epoch-keyed"; }
};

TEST(DeviceData, ADatasetWithoutADeviceFormSaysWhy) {
  const EpochKeyed keyed;
  EXPECT_EQ(materialise(keyed, c10::Device(c10::kCPU)), nullptr);
  EXPECT_NE(why_not_on_device(keyed).find("epoch-keyed has no device form"), std::string::npos);
  EXPECT_EQ(why_not_on_device(SyntheticTokens(SyntheticTokensOptions{}, 0)), "");
}

TEST(DeviceData, OneProcessMaterialisesItsDatasetOnceForEveryLoop) {
  const auto tokens = std::make_shared<SyntheticTokens>(SyntheticTokensOptions{}, 0);
  const SharedDeviceData shared(tokens, c10::Device(c10::kCPU));
  const DeviceData* first = shared.get();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(shared.get(), first);
  EXPECT_EQ(SharedDeviceData(std::make_shared<EpochKeyed>(), c10::Device(c10::kCPU)).get(),
            nullptr);
}

}  // namespace
}  // namespace ddpbench::data
