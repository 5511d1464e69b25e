// ghost_batch_norm.h — BatchNorm over the K rank chunks of a batch, on one device: in training,
// chunk r (rank r's rows, in rank order; sizes as the plan splits the step, 7,7,6 for 20 over 3
// ranks) is normalised with its own batch statistics,
// exactly as rank r's BatchNorm does under DDP without SyncBN or replica r's under DataParallel;
// the running statistics advance with chunk 0's statistics only (rank 0's, which DDP broadcasts
// before every forward; replica 0's, which DataParallel keeps). The exact reference's model of
// per-rank BatchNorm, written without any data-parallel code.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace torch::nn {
class Module;
}

namespace ddpbench::modes::single {

// A step's rank chunks as ghost BatchNorm splits them, and whose running statistics survive.
struct GhostChunks {
  std::vector<int64_t> sizes;  // per rank in rank order; 0 for a rank with no samples
  // The rank whose statistics the running statistics take: rank 0's, or under PyTorch's Join
  // another's, or none (-1: a joined rank 0's, which ran no forward and kept the step's start).
  int64_t keep = 0;
};

// Installs the ghost forward on every ddpbench BatchNorm2d of `model`; returns how many. Each
// forward splits its batch into the rank chunks `*chunks` holds at that moment (the caller sets
// them per step; ranks with no samples have size 0 and no chunk).
int install_ghost_batch_norm(torch::nn::Module& model, std::shared_ptr<const GhostChunks> chunks);

}  // namespace ddpbench::modes::single
