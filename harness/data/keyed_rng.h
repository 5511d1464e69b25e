// keyed_rng.h — counter-keyed random numbers (Note [Keyed randomness] in docs/ARCHITECTURE.md).
// Every random draw in the data pipeline comes from a generator whose seed is a hash of
// (scenario seed, stream, epoch, sample index), never from global state, so a sample is the same
// bytes in single, DP and DDP modes, on any rank and any thread.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace ddpbench::data {

// Named streams keep independent uses of the same (seed, index) uncorrelated.
enum class RngStream : std::uint64_t {
  kSyntheticLabel = 1,
  kSyntheticPixels = 2,
  kSyntheticPrototype = 3,
  kAugment = 4,
  kSyntheticText = 5,
  kSyntheticTensors = 6,
  kSyntheticTokens = 7,
};

// SplitMix64 finaliser: a bijective 64-bit mixer, good enough to decorrelate adjacent keys.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// xoshiro256** seeded from the mixed key. Small, fast, and fully specified here, so the byte
// stream does not depend on the standard library's distribution implementations.
class KeyedRng {
 public:
  KeyedRng(std::uint64_t seed, RngStream stream, std::initializer_list<std::uint64_t> keys) {
    std::uint64_t h = mix64(seed ^ mix64(static_cast<std::uint64_t>(stream)));
    for (std::uint64_t k : keys) h = mix64(h ^ mix64(k + 0x632BE59BD9B4E019ULL));
    for (auto& s : state_) {
      h = mix64(h);
      s = h;
    }
  }

  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform integer in [0, n). Lemire's multiply-shift; the tiny bias for huge n is irrelevant
  // here.
  std::uint64_t uniform_int(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next_u64()) * n) >> 64);
  }

  // Uniform double in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Standard normal by Box-Muller (one value per call; the twin is discarded for simplicity).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log stays finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

}  // namespace ddpbench::data
