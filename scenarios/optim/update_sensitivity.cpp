// update_sensitivity.cpp — see update_sensitivity.h.
#include "scenarios/optim/update_sensitivity.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <cmath>
#include <optional>
#include <tuple>

#include "scenarios/optim/optimizer_state.h"

namespace ddpbench::scenarios {
namespace {

struct AdamSettings {
  double lr = 0.0;
  double beta1 = 0.0;
  double beta2 = 0.0;
  double eps = 0.0;
  double l2 = 0.0;  // Adam's weight decay, added to the gradient (AdamW's shrinks the parameter)
};

// The Adam or AdamW options of the group that steps `parameter`; none for another optimizer.
std::optional<AdamSettings> adam_settings(torch::optim::Optimizer& optimizer,
                                          const at::Tensor& parameter) {
  for (auto& group : optimizer.param_groups()) {
    bool holds = false;
    for (const at::Tensor& p : group.params()) holds = holds || p.is_same(parameter);
    if (!holds) continue;
    auto& options = group.options();
    if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&options)) {
      return AdamSettings{adam->lr(), std::get<0>(adam->betas()), std::get<1>(adam->betas()),
                          adam->eps(), adam->weight_decay()};
    }
    if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&options)) {
      return AdamSettings{adamw->lr(), std::get<0>(adamw->betas()), std::get<1>(adamw->betas()),
                          adamw->eps(), 0.0};
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

at::Tensor update_sensitivity(torch::optim::Optimizer& optimizer, const at::Tensor& parameter,
                              const at::Tensor& gradient, const at::Tensor& before) {
  const std::optional<AdamSettings> a = adam_settings(optimizer, parameter);
  if (!a || !gradient.defined()) return {};
  const ParameterState state = parameter_state(optimizer, parameter);
  const auto step = state.find("step");
  if (step == state.end()) return {};
  const auto host = [](const at::Tensor& t) { return t.detach().to(at::kCPU, at::kDouble); };
  const double k = step->second.item<double>();
  const double c1 = 1.0 - std::pow(a->beta1, k);
  const double c2 = 1.0 - std::pow(a->beta2, k);
  const at::Tensor m = host(state.at("exp_avg"));
  const at::Tensor root_v = host(state.at("exp_avg_sq")).sqrt();
  // The gradient the moments took: Adam's adds weight_decay x the parameter it stepped from.
  const at::Tensor g = a->l2 == 0 ? host(gradient) : host(gradient) + a->l2 * host(before);
  const at::Tensor d = root_v / std::sqrt(c2) + a->eps;
  const at::Tensor through_v = at::where(
      root_v.gt(0), m * (1.0 - a->beta2) * g / (std::sqrt(c2) * root_v * d * d), at::zeros_like(d));
  return (a->lr / c1 * ((1.0 - a->beta1) / d - through_v)).abs();
}

}  // namespace ddpbench::scenarios
