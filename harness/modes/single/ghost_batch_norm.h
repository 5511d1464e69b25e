// ghost_batch_norm.h — BatchNorm over the K rank chunks of a batch, on one device: in training,
// chunk r (rows r*B/K .. (r+1)*B/K-1, rank order) is normalised with its own batch statistics,
// exactly as rank r's BatchNorm does under DDP without SyncBN or replica r's under DataParallel;
// the running statistics advance with chunk 0's statistics only (rank 0's, which DDP broadcasts
// before every forward; replica 0's, which DataParallel keeps). The exact reference's model of
// per-rank BatchNorm, written without any data-parallel code.
#pragma once

#include <cstdint>

namespace torch::nn {
class Module;
}

namespace ddpbench::modes::single {

// Installs the ghost forward on every ddpbench BatchNorm2d of `model`; returns how many.
int install_ghost_batch_norm(torch::nn::Module& model, int64_t chunks);

}  // namespace ddpbench::modes::single
