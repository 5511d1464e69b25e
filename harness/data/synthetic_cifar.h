// synthetic_cifar.h — CIFAR-10-shaped images (3x32x32 uint8, 10 classes) generated on demand from
// keyed seeds: any size, no file, identical on every rank. Each class has its own colour and
// stripe pattern and each sample adds keyed noise, so a model can learn it (losses fall).
// A sample is generated in a few microseconds (the pattern is tabulated per class, the noise drawn
// from a quantile table), so the data phase of a small model's step is not the generator's.
#pragma once

#include <array>
#include <vector>

#include "data/image_source.h"

namespace ddpbench::data {

class SyntheticCifar : public ImageSource {
 public:
  static constexpr int64_t kNumClasses = 10;

  // Sample i is generated from key first_key + i: a held-out set is a disjoint keyed range
  // (first_key at or beyond the training set's size), drawn from the same class patterns.
  SyntheticCifar(int64_t size, int64_t seed, int64_t first_key = 0);
  int64_t size() const override { return size_; }
  ImageShape shape() const override { return {3, 32, 32}; }
  int64_t num_classes() const override { return kNumClasses; }
  int64_t read(int64_t index, uint8_t* out) const override;
  std::string describe() const override;

  // Normal noise resolution: 12 random bits pick one of 4096 equiprobable quantiles.
  static constexpr int kNoiseBits = 12;

 private:
  int64_t size_;
  int64_t seed_;
  int64_t first_key_;
  // Per class, the noise-free image: base colour + stripes, 3x32x32 floats.
  std::vector<float> class_images_;
  // Standard normal quantiles at (i + 0.5) / 4096.
  std::array<float, size_t{1} << kNoiseBits> normal_quantiles_{};
};

}  // namespace ddpbench::data
