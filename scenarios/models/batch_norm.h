// batch_norm.h — ddpbench's BatchNorm2d: exactly torch.nn.BatchNorm2d (same parameter and buffer
// names, momentum 0.1, eps 1e-5, running statistics with the unbiased batch variance), plus one
// seam: a forward override that a mode can install to synchronise the batch statistics across
// replicas (SyncBN, modes/sync_bn). libtorch cannot swap a module held in a member handle, so
// the models own this module and the mode changes its behaviour instead of replacing it.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

#include <functional>

namespace ddpbench::scenarios::models {

class BatchNorm2dImpl : public torch::nn::Cloneable<BatchNorm2dImpl> {
 public:
  using ForwardOverride =
      std::function<torch::Tensor(BatchNorm2dImpl& self, const torch::Tensor& x)>;

  explicit BatchNorm2dImpl(int64_t num_features, double eps = 1e-5, double momentum = 0.1);
  void reset() override;
  torch::Tensor forward(const torch::Tensor& x);

  // Installed by a mode (SyncBN); empty = plain BatchNorm. Cleared by clone().
  void set_forward_override(ForwardOverride f) { override_ = std::move(f); }
  bool has_forward_override() const { return static_cast<bool>(override_); }

  int64_t num_features;
  double eps;
  double momentum;
  torch::Tensor weight, bias, running_mean, running_var, num_batches_tracked;

 private:
  ForwardOverride override_;
};
TORCH_MODULE(BatchNorm2d);

}  // namespace ddpbench::scenarios::models
