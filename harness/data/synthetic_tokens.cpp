// synthetic_tokens.cpp — see synthetic_tokens.h.
#include "data/synthetic_tokens.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <vector>

#include "data/keyed_rng.h"
#include "errors.h"

namespace ddpbench::data {

SyntheticTokens::SyntheticTokens(SyntheticTokensOptions options, int64_t seed)
    : options_(options), seed_(seed) {
  if (options_.size < 1 || options_.vocab_size < 2 || options_.block_size < 1) {
    throw InputError(fmt::format(
        "synthetic token data needs at least 1 sample, 2 token ids and 1 position (got {}, {}, "
        "{})",
        options_.size, options_.vocab_size, options_.block_size));
  }
}

Example SyntheticTokens::get(int64_t index, int64_t /*epoch*/) const {
  const SyntheticTokensOptions& o = options_;
  KeyedRng rng(static_cast<uint64_t>(seed_), RngStream::kSyntheticTokens,
               {static_cast<uint64_t>(o.first_key + index)});
  const auto vocab = static_cast<uint64_t>(o.vocab_size);
  uint64_t id = rng.uniform_int(vocab);
  const uint64_t stride = 1 + rng.uniform_int(vocab - 1);
  std::vector<int64_t> ids(static_cast<size_t>(o.block_size + 1));
  for (int64_t& v : ids) {
    v = static_cast<int64_t>(rng.uniform() < o.noise_rate ? rng.uniform_int(vocab) : id);
    id = (id + stride) % vocab;
  }
  const at::Tensor seq = at::tensor(ids, at::kLong);
  return {seq.slice(0, 0, o.block_size).clone(), seq.slice(0, 1, o.block_size + 1).clone()};
}

std::string SyntheticTokens::describe() const {
  return fmt::format(
      "synthetic token sequences ({} samples, {} positions, vocabulary {}, strided with {:g} "
      "noise, seed {})",
      options_.size, options_.block_size, options_.vocab_size, options_.noise_rate, seed_);
}

}  // namespace ddpbench::data
