// global_batch_norm.h — the arithmetic of SyncBN, apart from its communication: BatchNorm2d in
// training mode normalised with the statistics of a global batch that may be spread over ranks.
// Forward: per-channel local mean, M2 and count in float64 -> every rank's rows (the exchange) ->
// Chan's parallel combination in rank order (no E[x^2] - E[x]^2 cancellation) -> x_hat =
// (x - mean) * invstd in the input's dtype; the running statistics move with the global mean and
// the UNBIASED global variance. Backward: per-channel sum(dy) and sum(dy * x_hat) of every rank
// (the exchange) added in rank order, then the input gradient; weight and bias gradients stay
// local. Below float32 (autocast's bfloat16 or float16 input) the statistics, the normalisation
// and the sums are computed in float32 and the output rounded to the input's dtype, as PyTorch's
// CUDA SyncBatchNorm computes in its accumulation type.
//
// modes/sync_bn runs it with an exchange over a communicator (DDP's SyncBN). The exact reference
// (modes/single) runs it with no exchange on the whole batch: Note [SyncBN arithmetic reference].
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

namespace torch::nn {
class Module;
}

namespace ddpbench::scenarios::models {
class BatchNorm2dImpl;
}

namespace ddpbench::modes {

// How the ranks of one global batch share their BatchNorm numbers. Every call is collective.
// Note [SyncBN sums in rank order]: the backward's sums are gathered and added in rank order, not
// all-reduced, so that the exact reference can add them in the same order: an allreduce's order
// is the backend's (gloo's ring, NCCL's tree), and under autocast one float32 ulp in a sum can
// flip the bfloat16 rounding of an input gradient and move a whole weight gradient.
class BatchNormExchange {
 public:
  virtual ~BatchNormExchange() = default;
  // Every rank's row, in rank order, given this rank's: the forward's [2C + 1] (mean, M2, count)
  // and the backward's [2C] (sum(dy), sum(dy * x_hat)).
  virtual std::vector<at::Tensor> gather_rows(const at::Tensor& local) = 0;
};

// Note [SyncBN arithmetic reference]: in float32, SyncBN's normalisation, (x - mean) * invstd
// with float64 statistics, and PyTorch's CPU BatchNorm kernel, x * a + b with float32 statistics,
// round differently; a ReLU input within that rounding of 0 then takes opposite signs, and its
// whole gradient moves. Measured: resnet18_syncbn, seed 1, batch 16 on 2 ranks, float32: one
// element of layer3.0.bn1's output flips, 6.9% of layer3.0.conv1.weight's gradient at step 0,
// with DDP's statistics exchange exact. So below float64, DDP with SyncBN is judged against
// single-device training whose BatchNorm layers compute this same arithmetic on the whole batch
// (training/exact_reference.h); plain single-device training stays in the report as a figure.

// The forward of `bn` on `x` (NCHW): in training mode with the global batch's statistics,
// in eval mode with the running statistics (nothing exchanged).
// `exchange` nullptr = `x` is the whole batch (one rank, nothing communicated). `exchange` must
// outlive the backward. `ranks` (with a null exchange): x is the rows of that many ranks in rank
// order, of these sizes, and every per-rank number (statistics rows, backward sums) is computed
// per rank and combined in rank order, as the ranks do: the exact reference's SyncBN under
// autocast (modes/single/rank_threads.h).
at::Tensor global_batch_norm_forward(scenarios::models::BatchNorm2dImpl& bn, const at::Tensor& x,
                                     BatchNormExchange* exchange,
                                     const std::vector<int64_t>& ranks = {});

// Makes every ddpbench BatchNorm2d of `model` compute global_batch_norm_forward over `exchange`
// (shared by the layers, kept alive by them): DDP's SyncBN (modes/sync_bn), or with nullptr on
// its whole input (the exact reference's SyncBN model). Returns how many.
int install_global_batch_norm(torch::nn::Module& model,
                              std::shared_ptr<BatchNormExchange> exchange);

}  // namespace ddpbench::modes
