// global_batch_norm.cpp — see global_batch_norm.h.
#include "modes/common/global_batch_norm.h"

#include <torch/torch.h>

#include <algorithm>
#include <utility>

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

// Where a rank's rows start and how many it has, in `x`: one piece (x is this rank's) or one per
// rank of `ranks` (the reference standing for them).
std::vector<std::pair<int64_t, int64_t>> pieces_of(const at::Tensor& x,
                                                   const std::vector<int64_t>& ranks) {
  if (ranks.empty()) return {{0, x.size(0)}};
  std::vector<std::pair<int64_t, int64_t>> pieces;
  int64_t begin = 0;
  for (const int64_t n : ranks) {
    pieces.emplace_back(begin, n);
    begin += n;
  }
  return pieces;
}

// The dtype SyncBN computes in: float32 for autocast's reduced-precision activations.
at::ScalarType compute_dtype(const at::Tensor& x) {
  const at::ScalarType t = x.scalar_type();
  return t == at::kBFloat16 || t == at::kHalf ? at::kFloat : t;
}

// One rank's (mean, M2, count) row, in float64.
at::Tensor statistics_row(const at::Tensor& x) {
  const int64_t c = x.size(1);
  const at::Tensor xd = x.detach().to(at::kDouble).transpose(0, 1).reshape({c, -1});
  const double n = static_cast<double>(xd.size(1));
  const at::Tensor mean = xd.mean(1);
  const at::Tensor m2 = (xd - mean.unsqueeze(1)).pow(2).sum(1);
  return at::cat({mean, m2, at::full({1}, n, mean.options())});
}

// Each rank's statistics row, in rank order: exchanged (on x's device, never staged), or
// computed per piece.
std::vector<at::Tensor> statistics_rows(const at::Tensor& x, BatchNormExchange* exchange,
                                        const std::vector<std::pair<int64_t, int64_t>>& pieces) {
  if (exchange != nullptr) return exchange->gather_rows(statistics_row(x));
  std::vector<at::Tensor> rows;
  for (const auto& [begin, n] : pieces) rows.push_back(statistics_row(x.narrow(0, begin, n)));
  return rows;
}

// Local (mean, M2, count) rows -> Chan's combination. Every rank combines the same rows in the
// same order, so all ranks get bit-identical statistics.
GlobalStats global_statistics(const at::Tensor& x, BatchNormExchange* exchange,
                              const std::vector<std::pair<int64_t, int64_t>>& pieces) {
  const int64_t c = x.size(1);
  const std::vector<at::Tensor> all = statistics_rows(x, exchange, pieces);
  const at::TensorOptions options = all.front().options();
  // Rank order, one rank at a time: every rank adds the same numbers in the same order.
  at::Tensor count = at::zeros({1}, options);
  at::Tensor total_mean = at::zeros({c}, options);
  for (const auto& r : all) {
    const at::Tensor nr = r.narrow(0, 2 * c, 1);
    count += nr;
    total_mean += r.narrow(0, 0, c) * nr;
  }
  total_mean /= count;
  at::Tensor total_m2 = at::zeros({c}, options);
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
  // `mean` and `invstd` in the compute dtype; the output in x's.
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                               const at::Tensor& bias, const at::Tensor& mean,
                               const at::Tensor& invstd, double count, int64_t exchange_address,
                               std::vector<int64_t> ranks) {
    const at::Tensor xhat = (x.to(mean.scalar_type()) - channel(mean)) * channel(invstd);
    ctx->save_for_backward({xhat, weight, invstd});
    ctx->saved_data["count"] = count;
    ctx->saved_data["exchange"] = exchange_address;
    ctx->saved_data["ranks"] = ranks;
    ctx->saved_data["dtype"] = x.scalar_type();
    return {(xhat * channel(weight) + channel(bias)).to(x.scalar_type())};
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& xhat = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& invstd = saved[2];
    auto* exchange = reinterpret_cast<BatchNormExchange*>(ctx->saved_data["exchange"].toInt());
    const std::vector<int64_t> ranks = ctx->saved_data["ranks"].toIntVector();
    const at::Tensor dy = grad_outputs[0].to(xhat.scalar_type());
    const int64_t c = dy.size(1);
    // Note [SyncBN sums in rank order] (global_batch_norm.h).
    const auto sums_of = [&](int64_t begin, int64_t n) {
      const at::Tensor d = dy.narrow(0, begin, n);
      return at::cat({d.sum({0, 2, 3}), (d * xhat.narrow(0, begin, n)).sum({0, 2, 3})});
    };
    std::vector<at::Tensor> all;
    at::Tensor own;  // this rank's sums: its weight and bias gradients, which DDP reduces
    if (exchange != nullptr) {
      own = sums_of(0, dy.size(0));
      all = exchange->gather_rows(own);
    } else {
      for (const auto& [begin, n] : pieces_of(dy, ranks)) all.push_back(sums_of(begin, n));
    }
    at::Tensor sums = all.front().clone();
    for (size_t r = 1; r < all.size(); ++r) sums += all[r];
    // Standing for every rank, the reference's weight and bias gradients are their sum.
    if (!own.defined()) own = sums;
    const double count = ctx->saved_data["count"].toDouble();
    const at::Tensor mean_dy = sums.narrow(0, 0, c) / count;
    const at::Tensor mean_dy_xhat = sums.narrow(0, c, c) / count;
    const at::Tensor dx =
        (dy - channel(mean_dy) - xhat * channel(mean_dy_xhat)) * channel(invstd * weight);
    return {dx.to(ctx->saved_data["dtype"].toScalarType()),
            own.narrow(0, c, c),
            own.narrow(0, 0, c),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor(),
            at::Tensor()};
  }
};

}  // namespace

at::Tensor global_batch_norm_forward(scenarios::models::BatchNorm2dImpl& bn, const at::Tensor& x,
                                     BatchNormExchange* exchange,
                                     const std::vector<int64_t>& ranks) {
  if (!bn.is_training()) {  // the running statistics: nothing to exchange
    return torch::batch_norm(x, bn.weight, bn.bias, bn.running_mean, bn.running_var, false,
                             bn.momentum, bn.eps, false);
  }
  const GlobalStats s = global_statistics(x, exchange, pieces_of(x, ranks));
  {
    torch::NoGradGuard no_grad;
    bn.num_batches_tracked.add_(1);
    const double m = bn.momentum;
    bn.running_mean.mul_(1 - m).add_(s.mean.to(bn.running_mean.scalar_type()), m);
    bn.running_var.mul_(1 - m).add_(s.var_unbiased.to(bn.running_var.scalar_type()), m);
  }
  const at::ScalarType dtype = compute_dtype(x);
  const at::Tensor mean = s.mean.to(dtype);
  const at::Tensor invstd = (s.var_biased + bn.eps).rsqrt().to(dtype);
  return GlobalBatchNormFunction::apply(x, bn.weight, bn.bias, mean, invstd, s.count,
                                        reinterpret_cast<int64_t>(exchange), ranks)[0];
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
