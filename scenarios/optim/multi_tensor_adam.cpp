// multi_tensor_adam.cpp — see multi_tensor_adam.h.
#include "scenarios/optim/multi_tensor_adam.h"

#include <torch/torch.h>

#include <cmath>
#include <utility>

#include "scenarios/optim/torch_version_compat.h"

namespace ddpbench::scenarios {
namespace {

// One group's hyper-parameters, whichever class holds them.
struct AdamHyper {
  double lr;
  double beta1;
  double beta2;
  double eps;
  double weight_decay;
  bool decoupled;  // AdamW: the parameter shrinks; Adam: the gradient grows
};

// One group's step, libtorch's per-parameter arithmetic as multi-tensor kernels. `State` is
// AdamParamState or AdamWParamState; `states` the optimizer's map.
template <class State, class StateMap>
void step_group(const std::vector<at::Tensor>& group_params, const AdamHyper& h, StateMap& states) {
  std::vector<at::Tensor> params;
  std::vector<at::Tensor> grads;
  std::vector<at::Tensor> exp_avgs;
  std::vector<at::Tensor> exp_avg_sqs;
  std::vector<at::Scalar> bias_correction2_sqrts;
  std::vector<at::Scalar> step_sizes;
  for (const at::Tensor& p : group_params) {
    if (!p.grad().defined()) continue;
    TORCH_CHECK(!p.grad().is_sparse(), "multi-tensor Adam does not support sparse gradients");
    const auto key = compat::optimizer_state_key(p);
    auto it = states.find(key);
    if (it == states.end()) {
      auto fresh = std::make_unique<State>();
      fresh->step(0);
      fresh->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
      fresh->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
      states[key] = std::move(fresh);
      it = states.find(key);
    }
    auto& state = static_cast<State&>(*it->second);
    state.step(state.step() + 1);
    const double bias_correction1 = 1 - std::pow(h.beta1, state.step());
    const double bias_correction2 = 1 - std::pow(h.beta2, state.step());
    params.push_back(p);
    grads.push_back(p.grad());
    exp_avgs.push_back(state.exp_avg());
    exp_avg_sqs.push_back(state.exp_avg_sq());
    bias_correction2_sqrts.emplace_back(std::sqrt(bias_correction2));
    step_sizes.emplace_back(-(h.lr / bias_correction1));
  }
  if (params.empty()) return;
  if (h.weight_decay != 0) {
    if (h.decoupled) {
      at::_foreach_mul_(params, 1 - h.lr * h.weight_decay);
    } else {
      grads = at::_foreach_add(grads, params, h.weight_decay);  // grad.add(p, wd): a new list
    }
  }
  at::_foreach_mul_(exp_avgs, h.beta1);
  at::_foreach_add_(exp_avgs, grads, 1 - h.beta1);
  at::_foreach_mul_(exp_avg_sqs, h.beta2);
  at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - h.beta2);
  std::vector<at::Tensor> denoms = at::_foreach_sqrt(exp_avg_sqs);
  at::_foreach_div_(denoms, bias_correction2_sqrts);
  at::_foreach_add_(denoms, h.eps);
  at::_foreach_addcdiv_(params, exp_avgs, denoms, step_sizes);
}

template <class Options>
AdamHyper hyper_of(const Options& o, bool decoupled) {
  TORCH_CHECK(!o.amsgrad(), "multi-tensor Adam: amsgrad is not offered");
  return {o.lr(),  std::get<0>(o.betas()), std::get<1>(o.betas()),
          o.eps(), o.weight_decay(),       decoupled};
}

template <class Options, class State, class Optim>
at::Tensor foreach_step(Optim& optimizer, const torch::optim::Optimizer::LossClosure& closure,
                        bool decoupled) {
  torch::NoGradGuard no_grad;
  at::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : optimizer.param_groups()) {
    const AdamHyper h = hyper_of(static_cast<const Options&>(group.options()), decoupled);
    step_group<State>(group.params(), h, optimizer.state());
  }
  return loss;
}

}  // namespace

MultiTensorAdam::MultiTensorAdam(std::vector<torch::optim::OptimizerParamGroup> groups,
                                 torch::optim::AdamOptions defaults)
    : torch::optim::Adam(std::move(groups), std::move(defaults)) {}

at::Tensor MultiTensorAdam::step(LossClosure closure) {
  return foreach_step<torch::optim::AdamOptions, torch::optim::AdamParamState>(*this, closure,
                                                                               false);
}

MultiTensorAdamW::MultiTensorAdamW(std::vector<torch::optim::OptimizerParamGroup> groups,
                                   torch::optim::AdamWOptions defaults)
    : torch::optim::AdamW(std::move(groups), std::move(defaults)) {}

at::Tensor MultiTensorAdamW::step(LossClosure closure) {
  return foreach_step<torch::optim::AdamWOptions, torch::optim::AdamWParamState>(*this, closure,
                                                                                 true);
}

}  // namespace ddpbench::scenarios
