// sync_batch_norm.h — SyncBatchNorm for DDP, in ddpbench's own code because PyTorch 1.13's
// SyncBatchNorm refuses CPU tensors; it runs on the CPU and on CUDA devices alike. The arithmetic
// is modes/common/global_batch_norm.h; this file supplies its exchange: an all-gather of every
// rank's per-channel (mean, M2, count) rows (counts may differ per rank) in the forward, and of
// every rank's sum(dy) and sum(dy * x_hat) in the backward, added in rank order
// (Note [SyncBN sums in rank order], global_batch_norm.h). Weight and bias gradients stay local
// and reach the other ranks through DDP's allreduce. Eval mode communicates nothing.
#pragma once

#include <memory>

#include "comm/communicator.h"

namespace torch::nn {
class Module;
}

namespace ddpbench::modes::sync_bn {

// Shared switches for every converted layer of one model.
struct SyncBnControl {
  // Fault injection (`syncbn:rank=R`): this rank still joins every collective, so nothing hangs,
  // but normalises with its local statistics as if the exchange had been skipped.
  bool skip_exchange = false;
};

// Makes every ddpbench BatchNorm2d in `model` synchronise over `comm` (like
// torch.nn.SyncBatchNorm.convert_sync_batchnorm). Returns how many layers were converted.
// `comm` and `control` must outlive the model's use.
int convert_sync_batchnorm(torch::nn::Module& model, comm::Communicator& comm,
                           std::shared_ptr<SyncBnControl> control);

// Number of ddpbench BatchNorm2d layers in `model` (what convert_sync_batchnorm would convert).
int count_batchnorm(const torch::nn::Module& model);

}  // namespace ddpbench::modes::sync_bn
