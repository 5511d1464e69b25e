// joined_batch.h — a per-rank mode's batch under uneven data (PyTorch's Join): a rank out of
// batches at a step has joined, runs no forward or backward and reduces zeros; the `join` fault
// makes such a rank train on the last batch it had instead. ddp and zero ask it the same question
// each step (ddp/ddp_path.cpp, zero/zero_path.cpp: Note [A joined zero rank]).
#pragma once

#include <vector>

#include "data/batch_plan.h"
#include "data/dataset.h"

namespace ddpbench::modes {

// Note [PyTorch's Join, as it runs]: a rank out of batches has left its training loop, and
// PyTorch's Join only shadows the collectives the others still issue (DDP's join hook: the buffer
// broadcast, zeros for every gradient bucket, their results dropped; ZeroRedundancyOptimizer's:
// step() on whatever .grad still holds). So a joined DDP rank takes no optimizer step: its
// parameters and optimizer state stay as its last step left them. When the epoch's loop ends,
// Join's post-hook broadcasts the parameters and buffers of the last rank to join (the highest
// rank still training on the epoch's last step) to every rank (`_sync_final_model`), and so it
// does when a run ends inside an epoch (leaving the `with Join(...)` block runs the same hook).
// Inside Join every forward starts from the buffers of the highest rank still training, not rank
// 0's (`_sync_buffers`), and a joined rank receives them too (`_check_and_sync_module_buffers`).
// With an optimizer that keeps state (momentum, Adam), the ranks that sat out hold stale state from
// then on, and their updates part from the others' at the next epoch's first step; ZeRO's joined
// rank steps its shard with its last step's gradients again. Measured against PyTorch 1.13 and 2.11
// with reference/torch_ddp_oracle.py (each epoch inside Join): ddpbench's ddp (both engines) and
// zero stage 1 follow it bit for bit; the exact reference models the Join that contributes zeros
// and nothing else, so those two cases FAIL, which is what PyTorch computes (reports/METRICS.md,
// "PyTorch's Join").
struct JoinStep {
  std::vector<bool> joined;  // per rank: out of batches at this step
  bool in_join = false;      // RunSetup::in_join: every epoch's loop runs inside Join
  int last_joiner = 0;       // the highest rank still training at this step
  bool epoch_end = false;    // this step ends the epoch's loop, and so its Join

  JoinStep(const data::EpochPlan& epoch, int64_t step_in_epoch, bool in_join)
      : in_join(in_join), epoch_end(step_in_epoch == epoch.num_steps() - 1) {
    for (int64_t r = 0; r < epoch.num_ranks(); ++r) {
      joined.push_back(epoch.local_batch(step_in_epoch, r).empty());
      if (!joined.back()) last_joiner = static_cast<int>(r);
    }
  }
  JoinStep() = default;
  // Join's final sync ends this step: the epoch's loop ends here, or the run's (`last_step`).
  bool syncs(bool last_step) const { return in_join && (epoch_end || last_step); }
  // Whose buffers every forward starts from: rank 0's, or inside Join the highest rank still
  // training (DDP's _sync_buffers agrees on it with an allreduce of MAX).
  int buffer_source() const { return in_join ? last_joiner : 0; }
  // Whether rank r's state must equal the others' after this step: it trained, or Join synced.
  bool in_step(int r, bool synced) const {
    return synced || r >= static_cast<int>(joined.size()) || !joined[static_cast<size_t>(r)];
  }
};

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
