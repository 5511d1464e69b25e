// joined_batch.h — a per-rank mode's batch under uneven data (PyTorch's Join): a rank out of
// batches at a step has joined, runs no forward or backward and reduces zeros; the `join` fault
// makes such a rank train on the last batch it had instead. ddp and zero ask it the same question
// each step (ddp/ddp_path.cpp, zero/zero_path.cpp: Note [A joined zero rank]).
#pragma once

#include <vector>

#include "data/dataset.h"

namespace ddpbench::modes {

class JoinedBatch {
 public:
  // This step's batch: the rank's own shard, nullptr when it has joined (`shards` empty), or,
  // when `replay` (the join fault fires on this joined rank), the last batch it trained on.
  const data::Batch* take(const std::vector<data::Batch>& shards, bool replay) {
    joined_ = shards.empty() && !replay;
    if (!shards.empty()) last_ = shards.front();
    return joined_ ? nullptr : &last_;
  }
  // Whether the last take() found this rank joined.
  bool joined() const { return joined_; }

 private:
  bool joined_ = false;
  data::Batch last_;
};

}  // namespace ddpbench::modes
