// sync_batch_norm.h — SyncBatchNorm for DDP, in ddpbench's own code because PyTorch 1.13's
// SyncBatchNorm refuses CPU tensors; it runs on the CPU and on CUDA devices alike. Forward:
// per-channel local mean, M2 and count -> all-gather (counts may differ per rank) -> global mean
// and biased variance for normalisation, combined with Chan's parallel formula in float64 (no
// catastrophic cancellation of E[x^2] - E[x]^2); running statistics move with the global mean and
// the UNBIASED global variance. Backward: allreduce of per-channel sum(dy) and sum(dy * x_hat),
// then the input gradient; weight and bias gradients stay local and reach the other ranks through
// DDP's allreduce. Eval mode uses the running statistics and communicates nothing.
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
