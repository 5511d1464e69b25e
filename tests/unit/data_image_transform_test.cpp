// data_image_transform_test.cpp — the keyed augmentation: same (seed, epoch, index) -> same
// tensor; the crop/flip/normalise arithmetic equals the same pipeline written with tensor ops
// (pad -> slice -> flip -> normalise); the draws cover the whole crop range and flip about half.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <set>

#include "data/image_transform.h"
#include "data/synthetic_cifar.h"

namespace ddpbench::data {
namespace {

ImageTransformOptions cifar_options() {
  ImageTransformOptions o;
  o.crop_padding = 4;
  o.random_flip = true;
  o.mean = {0.4914F, 0.4822F, 0.4465F};
  o.stddev = {0.2023F, 0.1994F, 0.2010F};
  o.seed = 11;
  return o;
}

std::vector<uint8_t> image(int64_t index) {
  SyntheticCifar src(100, 3);
  std::vector<uint8_t> raw(3 * 32 * 32);
  src.read(index, raw.data());
  return raw;
}

// The torchvision pipeline spelled with tensor ops, as an independent implementation.
at::Tensor reference_transform(const std::vector<uint8_t>& raw, const ImageTransformOptions& o,
                               const AugmentDraw& d) {
  at::Tensor img = at::from_blob(const_cast<uint8_t*>(raw.data()), {3, 32, 32}, at::kByte)
                       .to(at::kFloat)
                       .div(255.0);
  at::Tensor padded =
      at::constant_pad_nd(img, {o.crop_padding, o.crop_padding, o.crop_padding, o.crop_padding});
  at::Tensor crop =
      padded.slice(1, d.offset_y, d.offset_y + 32).slice(2, d.offset_x, d.offset_x + 32);
  if (d.flip) crop = crop.flip({2});
  at::Tensor mean = at::tensor(o.mean).view({3, 1, 1});
  at::Tensor stddev = at::tensor(o.stddev).view({3, 1, 1});
  return (crop - mean) / stddev;
}

TEST(ImageTransform, MatchesTensorOpPipelineForManySamples) {
  const auto o = cifar_options();
  int flips = 0;
  for (int64_t index = 0; index < 40; ++index) {
    const auto raw = image(index);
    const AugmentDraw d = draw_augmentation(o, 2, index);
    flips += d.flip ? 1 : 0;
    const at::Tensor got = transform_image(raw.data(), {3, 32, 32}, o, 2, index);
    const at::Tensor want = reference_transform(raw, o, d);
    ASSERT_TRUE(at::allclose(got, want, 1e-6, 1e-6)) << "sample " << index;
  }
  EXPECT_GT(flips, 0);
  EXPECT_LT(flips, 40);
}

TEST(ImageTransform, IsKeyedBySeedEpochAndIndex) {
  const auto o = cifar_options();
  const auto raw = image(5);
  const at::Tensor a = transform_image(raw.data(), {3, 32, 32}, o, 0, 5);
  EXPECT_TRUE(at::equal(a, transform_image(raw.data(), {3, 32, 32}, o, 0, 5)));
  // Over many epochs at least one draw must differ from epoch 0's.
  bool epoch_changes = false;
  for (int64_t e = 1; e < 10 && !epoch_changes; ++e) {
    epoch_changes = !at::equal(a, transform_image(raw.data(), {3, 32, 32}, o, e, 5));
  }
  EXPECT_TRUE(epoch_changes);
}

TEST(ImageTransform, DrawsCoverTheWholeCropRange) {
  const auto o = cifar_options();
  std::set<int64_t> ys;
  std::set<int64_t> xs;
  for (int64_t i = 0; i < 2000; ++i) {
    const AugmentDraw d = draw_augmentation(o, 0, i);
    ys.insert(d.offset_y);
    xs.insert(d.offset_x);
  }
  EXPECT_EQ(ys.size(), 9u);
  EXPECT_EQ(*ys.begin(), 0);
  EXPECT_EQ(*ys.rbegin(), 8);
  EXPECT_EQ(xs.size(), 9u);
}

TEST(ImageTransform, WithoutAugmentationIsPlainNormalise) {
  ImageTransformOptions o;
  o.mean = {0.5F, 0.5F, 0.5F};
  o.stddev = {0.5F, 0.5F, 0.5F};
  const auto raw = image(1);
  const at::Tensor got = transform_image(raw.data(), {3, 32, 32}, o, 3, 1);
  const at::Tensor want =
      (at::from_blob(const_cast<uint8_t*>(raw.data()), {3, 32, 32}, at::kByte).to(at::kFloat) /
           255.0 -
       0.5) /
      0.5;
  EXPECT_TRUE(at::allclose(got, want, 1e-6, 1e-6));
}

}  // namespace
}  // namespace ddpbench::data
