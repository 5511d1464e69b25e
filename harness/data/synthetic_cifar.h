// synthetic_cifar.h — CIFAR-10-shaped images (3x32x32 uint8, 10 classes) generated on demand from
// keyed seeds: any size, no file, identical on every rank. Each class has its own colour and
// stripe pattern and each sample adds keyed noise, so a model can learn it (losses fall).
#pragma once

#include "data/image_source.h"

namespace ddpbench::data {

class SyntheticCifar : public ImageSource {
 public:
  static constexpr int64_t kNumClasses = 10;

  SyntheticCifar(int64_t size, int64_t seed);
  int64_t size() const override { return size_; }
  ImageShape shape() const override { return {3, 32, 32}; }
  int64_t num_classes() const override { return kNumClasses; }
  int64_t read(int64_t index, uint8_t* out) const override;
  std::string describe() const override;

 private:
  struct ClassPattern {
    double base[3];         // mean intensity per channel
    double freq_x, freq_y;  // stripe frequencies (radians per pixel)
    double phase[3];
  };
  int64_t size_;
  int64_t seed_;
  std::vector<ClassPattern> patterns_;
};

}  // namespace ddpbench::data
