// synthetic_text.h — two-class token sequences generated on demand from keyed seeds: any size, no
// file, identical on every rank. A sample's label, length (uniform in [min_length, max_length])
// and tokens are drawn from one generator keyed by (seed, index), label and length first, so
// sequence_length() draws two numbers instead of the sequence. Tokens are uniform over the
// vocabulary's ids 1..vocab_size-1, except that each position is, with probability signal_rate,
// one of signal_tokens ids of the sample's class (chosen once per class from the seed): a
// class-dependent signal a bag-of-embeddings model learns in a few hundred steps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace ddpbench::data {

struct SyntheticTextOptions {
  int64_t size = 25000;  // aclImdb's training split
  int64_t vocab_size = 15000;
  int64_t min_length = 50;
  int64_t max_length = 500;
  int64_t signal_tokens = 50;  // per class
  double signal_rate = 0.1;
  // Sample i is generated from key first_key + i: a held-out split of the same distribution (the
  // evaluation pass) starts past the training split's keys, so it shares no sample with it.
  int64_t first_key = 0;
};

class SyntheticText : public Dataset {
 public:
  static constexpr int64_t kNumClasses = 2;

  // Throws InputError for sizes or lengths that cannot make a dataset.
  SyntheticText(SyntheticTextOptions options, int64_t seed);
  int64_t size() const override { return options_.size; }
  Example get(int64_t index, int64_t epoch) const override;
  bool same_every_epoch() const override { return true; }  // no augmentation
  std::string describe() const override;
  std::optional<int64_t> sequence_length(int64_t index) const override;

 private:
  SyntheticTextOptions options_;
  int64_t seed_;
  std::vector<int64_t>
      signal_;  // class c's signal ids: [c * signal_tokens, (c + 1) * signal_tokens)
};

}  // namespace ddpbench::data
