// synthetic_tokens.h — next-token prediction data for language models, generated on demand from
// keyed seeds: any size, no file, identical on every rank. Sample i is a sequence of
// block_size + 1 token ids from one generator keyed by (seed, first_key + i): a start id and a
// stride drawn first, then each position the previous id plus the stride (mod vocab_size), or,
// with probability noise_rate, a uniform id. The input is the first block_size ids and the target
// the last block_size (the input shifted by one, as nanoGPT's get_batch cuts x and y), both int64
// [block_size]: a pattern a small transformer learns, with noise it cannot.
#pragma once

#include <cstdint>
#include <string>

#include "data/dataset.h"

namespace ddpbench::data {

struct SyntheticTokensOptions {
  int64_t size = 4096;
  int64_t vocab_size = 64;
  int64_t block_size = 16;
  double noise_rate = 0.1;
  // As SyntheticTextOptions::first_key: a held-out split starts past the training split's keys.
  int64_t first_key = 0;
};

class SyntheticTokens : public Dataset {
 public:
  // Throws InputError for sizes that cannot make a dataset.
  SyntheticTokens(SyntheticTokensOptions options, int64_t seed);
  int64_t size() const override { return options_.size; }
  Example get(int64_t index, int64_t epoch) const override;
  bool same_every_epoch() const override { return true; }  // no augmentation
  std::string describe() const override;

 private:
  SyntheticTokensOptions options_;
  int64_t seed_;
};

}  // namespace ddpbench::data
