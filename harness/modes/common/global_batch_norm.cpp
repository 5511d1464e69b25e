// global_batch_norm.cpp — see global_batch_norm.h.
#include "modes/common/global_batch_norm.h"

#include <torch/torch.h>

#include <algorithm>

#include "scenarios/models/batch_norm.h"

namespace ddpbench::modes {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Per-channel view of a [C] tensor against NCHW input.
at::Tensor channel(const at::Tensor& t) { return t.view({1, -1, 1, 1}); }

struct GlobalStats {
  at::Tensor mean;          // [C], float64
  at::Tensor var_biased;    // [C], float64
  at::Tensor var_unbiased;  // [C], float64
  double count = 0;
};

// Local (mean, M2, count) -> every rank's rows -> Chan's combination. Every rank combines the same
// rows in the same order, so all ranks get bit-identical statistics.
GlobalStats global_statistics(const at::Tensor& x, BatchNormExchange* exchange) {
  const int64_t c = x.size(1);
  const at::Tensor xd = x.detach().to(at::kDouble).transpose(0, 1).reshape({c, -1});
  const double n = static_cast<double>(xd.size(1));
  const at::Tensor mean = xd.mean(1);
  const at::Tensor m2 = (xd - mean.unsqueeze(1)).pow(2).sum(1);
  // On x's device: the statistics are exchanged in device memory (NCCL), never staged.
  const at::Tensor local = at::cat({mean, m2, at::full({1}, n, mean.options())});
  const std::vector<at::Tensor> all =
      exchange != nullptr ? exchange->gather_rows(local) : std::vector<at::Tensor>{local};
  // Rank order, one rank at a time: every rank adds the same numbers in the same order.
  at::Tensor count = at::zeros({1}, mean.options());
  at::Tensor total_mean = at::zeros({c}, mean.options());
  for (const auto& r : all) {
    const at::Tensor nr = r.narrow(0, 2 * c, 1);
    count += nr;
    total_mean += r.narrow(0, 0, c) * nr;
  }
  total_mean /= count;
  at::Tensor total_m2 = at::zeros({c}, mean.options());
  for (const auto& r : all) {
    const at::Tensor nr = r.narrow(0, 2 * c, 1);
    total_m2 += r.narrow(0, c, c) + nr * (r.narrow(0, 0, c) - total_mean).pow(2);
  }
  GlobalStats s;
  s.count = count.item<double>();  // the one host read: the backward divides by it
  s.mean = total_mean;
  s.var_biased = total_m2 / s.count;
  s.var_unbiased = total_m2 / std::max(s.count - 1.0, 1.0);
  return s;
}

class GlobalBatchNormFunction : public torch::autograd::Function<GlobalBatchNormFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                               const at::Tensor& bias, const at::Tensor& mean,
                               const at::Tensor& invstd, double count, int64_t exchange_address) {
    const at::Tensor xhat = (x - channel(mean)) * channel(invstd);
    ctx->save_for_backward({xhat, weight, invstd});
    ctx->saved_data["count"] = count;
    ctx->saved_data["exchange"] = exchange_address;
    return {xhat * channel(weight) + channel(bias)};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& xhat = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& invstd = saved[2];
    auto* exchange = reinterpret_cast<BatchNormExchange*>(ctx->saved_data["exchange"].toInt());
    const at::Tensor dy = grad_outputs[0];
    const at::Tensor sum_dy = dy.sum({0, 2, 3});
    const at::Tensor sum_dy_xhat = (dy * xhat).sum({0, 2, 3});
    at::Tensor sums = at::cat({sum_dy, sum_dy_xhat});
    if (exchange != nullptr) exchange->sum(sums);
    const double count = ctx->saved_data["count"].toDouble();
    const int64_t c = dy.size(1);
    const at::Tensor mean_dy = sums.narrow(0, 0, c) / count;
    const at::Tensor mean_dy_xhat = sums.narrow(0, c, c) / count;
    const at::Tensor dx =
        (dy - channel(mean_dy) - xhat * channel(mean_dy_xhat)) * channel(invstd * weight);
    return {dx, sum_dy_xhat, sum_dy, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor global_batch_norm_forward(scenarios::models::BatchNorm2dImpl& bn, const at::Tensor& x,
                                     BatchNormExchange* exchange) {
  if (!bn.is_training()) {  // the running statistics: nothing to exchange
    return torch::batch_norm(x, bn.weight, bn.bias, bn.running_mean, bn.running_var, false,
                             bn.momentum, bn.eps, false);
  }
  const GlobalStats s = global_statistics(x, exchange);
  {
    torch::NoGradGuard no_grad;
    bn.num_batches_tracked.add_(1);
    const double m = bn.momentum;
    bn.running_mean.mul_(1 - m).add_(s.mean.to(bn.running_mean.scalar_type()), m);
    bn.running_var.mul_(1 - m).add_(s.var_unbiased.to(bn.running_var.scalar_type()), m);
  }
  const at::Tensor mean = s.mean.to(x.scalar_type());
  const at::Tensor invstd = (s.var_biased + bn.eps).rsqrt().to(x.scalar_type());
  return GlobalBatchNormFunction::apply(x, bn.weight, bn.bias, mean, invstd, s.count,
                                        reinterpret_cast<int64_t>(exchange))[0];
}

int install_global_batch_norm(torch::nn::Module& model,
                              std::shared_ptr<BatchNormExchange> exchange) {
  using scenarios::models::BatchNorm2d;
  using scenarios::models::BatchNorm2dImpl;
  int installed = 0;
  for (const auto& m : model.modules(/*include_self=*/false)) {
    if (auto* bn = m->as<BatchNorm2d>()) {
      bn->set_forward_override([exchange](BatchNorm2dImpl& self, const torch::Tensor& x) {
        return global_batch_norm_forward(self, x, exchange.get());
      });
      ++installed;
    }
  }
  return installed;
}

}  // namespace ddpbench::modes
