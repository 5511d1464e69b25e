// vocabulary.h — token strings to ids, as torchtext's build_vocab_from_iterator(min_freq=...,
// specials=["<unk>"], max_tokens=...) followed by set_default_index(0): index 0 is the unknown
// token (also the padding id), then every token seen at least min_freq times, most frequent
// first, ties in byte order (Python's order of str for UTF-8 text), until max_tokens ids in all.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace ddpbench::data {

class Vocabulary {
 public:
  using Counts = std::unordered_map<std::string, int64_t>;

  Vocabulary(const Counts& counts, int64_t min_freq, int64_t max_tokens);

  // Ids in use, index 0 included.
  int64_t size() const { return static_cast<int64_t>(tokens_.size()) + 1; }
  // The id of `token`; 0 when it is not in the vocabulary.
  int64_t id(const std::string& token) const;
  // The token of id `id` >= 1 (id 0 has no string).
  const std::string& token(int64_t id) const { return tokens_.at(static_cast<size_t>(id - 1)); }

 private:
  std::vector<std::string> tokens_;  // ids 1..size()-1
  std::unordered_map<std::string, int64_t> ids_;
};

}  // namespace ddpbench::data
