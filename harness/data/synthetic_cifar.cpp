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
constexpr double kNoiseStd = 30.0;
}  // namespace

SyntheticCifar::SyntheticCifar(int64_t size, int64_t seed) : size_(size), seed_(seed) {
  if (size_ <= 0) throw InputError(fmt::format("synthetic dataset size {} must be positive", size));
  for (int64_t c = 0; c < kNumClasses; ++c) {
    KeyedRng rng(static_cast<uint64_t>(seed_), RngStream::kSyntheticPrototype,
                 {static_cast<uint64_t>(c)});
    ClassPattern p{};
    for (double& b : p.base) b = 60.0 + 135.0 * rng.uniform();
    p.freq_x = 0.05 + 0.5 * rng.uniform();
    p.freq_y = 0.05 + 0.5 * rng.uniform();
    for (double& ph : p.phase) ph = 6.283185307179586 * rng.uniform();
    patterns_.push_back(p);
  }
}

int64_t SyntheticCifar::read(int64_t index, uint8_t* out) const {
  const auto key = static_cast<uint64_t>(index);
  KeyedRng label_rng(static_cast<uint64_t>(seed_), RngStream::kSyntheticLabel, {key});
  const auto label = static_cast<int64_t>(label_rng.uniform_int(kNumClasses));
  const ClassPattern& p = patterns_[static_cast<size_t>(label)];
  KeyedRng noise(static_cast<uint64_t>(seed_), RngStream::kSyntheticPixels, {key});
  const ImageShape s = shape();
  for (int64_t c = 0; c < s.channels; ++c) {
    for (int64_t y = 0; y < s.height; ++y) {
      for (int64_t x = 0; x < s.width; ++x) {
        const double v = p.base[c] +
                         kPatternAmplitude * std::sin(p.freq_x * x + p.freq_y * y + p.phase[c]) +
                         kNoiseStd * noise.normal();
        *out++ = static_cast<uint8_t>(std::clamp(std::lround(v), 0L, 255L));
      }
    }
  }
  return label;
}

std::string SyntheticCifar::describe() const {
  return fmt::format("synthetic CIFAR-10 ({} samples, 3x32x32, seed {})", size_, seed_);
}

}  // namespace ddpbench::data
