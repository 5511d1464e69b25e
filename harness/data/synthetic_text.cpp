// synthetic_text.cpp — see synthetic_text.h.
#include "data/synthetic_text.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "data/keyed_rng.h"
#include "errors.h"

namespace ddpbench::data {
namespace {

// The generator of sample `index` after its label and length were drawn (in that order).
struct Header {
  int64_t label;
  int64_t length;
};

Header draw_header(KeyedRng& rng, const SyntheticTextOptions& o) {
  Header h{};
  h.label = static_cast<int64_t>(rng.uniform_int(SyntheticText::kNumClasses));
  h.length =
      o.min_length +
      static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(o.max_length - o.min_length + 1)));
  return h;
}

KeyedRng sample_rng(int64_t seed, int64_t index) {
  return KeyedRng(static_cast<uint64_t>(seed), RngStream::kSyntheticText,
                  {static_cast<uint64_t>(index)});
}

}  // namespace

SyntheticText::SyntheticText(SyntheticTextOptions options, int64_t seed)
    : options_(options), seed_(seed) {
  const auto& o = options_;
  if (o.size <= 0 || o.vocab_size < 2 || o.min_length < 0 || o.max_length < o.min_length ||
      o.signal_tokens <= 0 || o.signal_rate < 0 || o.signal_rate > 1) {
    throw InputError(fmt::format(
        "synthetic text: size {} vocab {} lengths [{}, {}] signal {} x {} cannot make a dataset",
        o.size, o.vocab_size, o.min_length, o.max_length, o.signal_tokens, o.signal_rate));
  }
  // Keyed by class with the index -1 - c, which no sample has, so the tables and the samples
  // never share a generator.
  for (int64_t c = 0; c < kNumClasses; ++c) {
    KeyedRng rng = sample_rng(seed_, -1 - c);
    for (int64_t j = 0; j < o.signal_tokens; ++j) {
      signal_.push_back(
          1 + static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(o.vocab_size - 1))));
    }
  }
}

Example SyntheticText::get(int64_t index, int64_t /*epoch*/) const {
  const auto& o = options_;
  KeyedRng rng = sample_rng(seed_, options_.first_key + index);
  const Header h = draw_header(rng, o);
  at::Tensor input = at::empty({h.length}, at::kLong);
  int64_t* ids = input.data_ptr<int64_t>();
  const int64_t* signal = signal_.data() + h.label * o.signal_tokens;
  for (int64_t t = 0; t < h.length; ++t) {
    ids[t] =
        rng.uniform() < o.signal_rate
            ? signal[rng.uniform_int(static_cast<uint64_t>(o.signal_tokens))]
            : 1 + static_cast<int64_t>(rng.uniform_int(static_cast<uint64_t>(o.vocab_size - 1)));
  }
  return {input, at::scalar_tensor(h.label, at::kLong)};
}

std::optional<int64_t> SyntheticText::sequence_length(int64_t index) const {
  KeyedRng rng = sample_rng(seed_, options_.first_key + index);
  return draw_header(rng, options_).length;
}

std::string SyntheticText::describe() const {
  return fmt::format("synthetic text ({} sequences of {}..{} tokens, vocabulary {}, seed {})",
                     options_.size, options_.min_length, options_.max_length, options_.vocab_size,
                     seed_);
}

}  // namespace ddpbench::data
