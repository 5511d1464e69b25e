// ghost_batch_norm.cpp — see ghost_batch_norm.h.
#include "modes/single/ghost_batch_norm.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "errors.h"
#include "scenarios/models/batch_norm.h"

namespace ddpbench::modes::single {
namespace {

using scenarios::models::BatchNorm2dImpl;

at::Tensor ghost_forward(BatchNorm2dImpl& bn, const at::Tensor& x, const GhostChunks& chunks) {
  const std::vector<int64_t>& chunk_sizes = chunks.sizes;
  if (!bn.is_training()) {
    return torch::batch_norm(x, bn.weight, bn.bias, bn.running_mean, bn.running_var, false,
                             bn.momentum, bn.eps, /*cudnn_enabled=*/false);
  }
  std::vector<int64_t> sizes;
  std::vector<int64_t> ranks;  // of each chunk
  int64_t rows = 0;
  for (size_t r = 0; r < chunk_sizes.size(); ++r) {
    if (chunk_sizes[r] == 0) continue;  // a rank with no samples this step has no chunk
    sizes.push_back(chunk_sizes[r]);
    ranks.push_back(static_cast<int64_t>(r));
    rows += chunk_sizes[r];
  }
  if (rows != x.size(0)) {
    throw WorkerFailure(
        fmt::format("reference: a batch of {} does not split into rank chunks "
                    "of {} samples",
                    x.size(0), rows));
  }
  // Every chunk starts from the running statistics before this forward; all but the kept rank's
  // update scratch copies that are dropped: only its statistics survive the step.
  at::Tensor start_mean, start_var;
  {
    torch::NoGradGuard no_grad;
    if (chunks.keep >= 0) bn.num_batches_tracked.add_(1);
    start_mean = bn.running_mean.clone();
    start_var = bn.running_var.clone();
  }
  std::vector<at::Tensor> out;
  const std::vector<at::Tensor> parts = x.split_with_sizes(sizes);
  for (size_t r = 0; r < parts.size(); ++r) {
    const bool kept = ranks[r] == chunks.keep;
    at::Tensor mean = kept ? bn.running_mean : start_mean.clone();
    at::Tensor var = kept ? bn.running_var : start_var.clone();
    out.push_back(torch::batch_norm(parts[r], bn.weight, bn.bias, mean, var, true, bn.momentum,
                                    bn.eps, /*cudnn_enabled=*/false));
  }
  return at::cat(out);
}

}  // namespace

int install_ghost_batch_norm(torch::nn::Module& model, std::shared_ptr<const GhostChunks> chunks) {
  int installed = 0;
  for (const auto& m : model.modules(/*include_self=*/true)) {
    if (auto* bn = m->as<BatchNorm2dImpl>()) {
      bn->set_forward_override([chunks](BatchNorm2dImpl& self, const at::Tensor& x) {
        return ghost_forward(self, x, *chunks);
      });
      ++installed;
    }
  }
  return installed;
}

}  // namespace ddpbench::modes::single
