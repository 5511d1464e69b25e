// token_sequences.h — a text dataset held in memory: one sequence of token ids and one class label
// per sample. get() returns the ids as an int64 [length] tensor (collate pads them), and the
// length of every sample is known up front (Dataset::sequence_length).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace ddpbench::data {

class TokenSequences : public Dataset {
 public:
  // Appends one sample. Ids are stored as int32 (vocabularies here are far below 2^31).
  void add(const std::vector<int64_t>& ids, int64_t label);
  void set_description(std::string description) { description_ = std::move(description); }

  int64_t size() const override { return static_cast<int64_t>(labels_.size()); }
  Example get(int64_t index, int64_t epoch) const override;
  bool same_every_epoch() const override { return true; }  // no augmentation
  std::string describe() const override { return description_; }
  std::optional<int64_t> sequence_length(int64_t index) const override;

 private:
  std::vector<int32_t> ids_;         // every sample's ids, back to back
  std::vector<int64_t> offsets_{0};  // sample i is ids_[offsets_[i], offsets_[i + 1])
  std::vector<int64_t> labels_;
  std::string description_;
};

}  // namespace ddpbench::data
