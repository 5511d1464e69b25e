// synthetic_cifar.cpp — see synthetic_cifar.h.
#include "data/synthetic_cifar.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "data/keyed_rng.h"
#include "errors.h"

namespace ddpbench::data {
namespace {
constexpr double kPatternAmplitude = 45.0;
constexpr float kNoiseStd = 30.0F;

// Phi^-1(p) by bisection on the CDF: run once per dataset for 4096 points, so simplicity wins.
double normal_quantile(double p) {
  double lo = -10.0;
  double hi = 10.0;
  for (int i = 0; i < 80; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}
}  // namespace

SyntheticCifar::SyntheticCifar(int64_t size, int64_t seed, int64_t first_key)
    : size_(size), seed_(seed), first_key_(first_key) {
  if (size_ <= 0) throw InputError(fmt::format("synthetic dataset size {} must be positive", size));
  const ImageShape s = shape();
  class_images_.reserve(static_cast<size_t>(kNumClasses * s.numel()));
  for (int64_t c = 0; c < kNumClasses; ++c) {
    KeyedRng rng(static_cast<uint64_t>(seed_), RngStream::kSyntheticPrototype,
                 {static_cast<uint64_t>(c)});
    double base[3];
    for (double& b : base) b = 60.0 + 135.0 * rng.uniform();
    const double freq_x = 0.05 + 0.5 * rng.uniform();
    const double freq_y = 0.05 + 0.5 * rng.uniform();
    double phase[3];
    for (double& ph : phase) ph = 6.283185307179586 * rng.uniform();
    for (int64_t ch = 0; ch < s.channels; ++ch) {
      for (int64_t y = 0; y < s.height; ++y) {
        for (int64_t x = 0; x < s.width; ++x) {
          class_images_.push_back(static_cast<float>(
              base[ch] + kPatternAmplitude * std::sin(freq_x * x + freq_y * y + phase[ch])));
        }
      }
    }
  }
  const auto n = static_cast<double>(normal_quantiles_.size());
  for (size_t i = 0; i < normal_quantiles_.size(); ++i) {
    normal_quantiles_[i] = static_cast<float>(normal_quantile((static_cast<double>(i) + 0.5) / n));
  }
}

int64_t SyntheticCifar::read(int64_t index, uint8_t* out) const {
  const auto key = static_cast<uint64_t>(first_key_ + index);
  KeyedRng label_rng(static_cast<uint64_t>(seed_), RngStream::kSyntheticLabel, {key});
  const auto label = static_cast<int64_t>(label_rng.uniform_int(kNumClasses));
  const int64_t numel = shape().numel();
  const float* pattern = class_images_.data() + label * numel;
  KeyedRng noise(static_cast<uint64_t>(seed_), RngStream::kSyntheticPixels, {key});
  constexpr int kDrawsPerWord = 64 / kNoiseBits;
  constexpr uint64_t kMask = (uint64_t{1} << kNoiseBits) - 1;
  uint64_t word = 0;
  int left = 0;
  for (int64_t p = 0; p < numel; ++p) {
    if (left == 0) {
      word = noise.next_u64();
      left = kDrawsPerWord;
    }
    const float v = pattern[p] + kNoiseStd * normal_quantiles_[word & kMask];
    word >>= kNoiseBits;
    --left;
    // Round half up after clamping to [0, 255]: the same bytes on every compiler and rank.
    out[p] = static_cast<uint8_t>(std::clamp(v, 0.0F, 255.0F) + 0.5F);
  }
  return label;
}

std::string SyntheticCifar::describe() const {
  if (first_key_ == 0) {
    return fmt::format("synthetic CIFAR-10 ({} samples, 3x32x32, seed {})", size_, seed_);
  }
  return fmt::format("synthetic CIFAR-10 held-out ({} samples from key {}, 3x32x32, seed {})",
                     size_, first_key_, seed_);
}

}  // namespace ddpbench::data
