// optimizer_state.cpp — see optimizer_state.h.
#include "scenarios/optim/optimizer_state.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <stdexcept>

#include "scenarios/optim/multi_tensor_sgd.h"
#include "scenarios/optim/torch_version_compat.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {
namespace {

constexpr const char* kMomentum = "momentum_buffer";
constexpr const char* kStep = "step";
constexpr const char* kExpAvg = "exp_avg";
constexpr const char* kExpAvgSq = "exp_avg_sq";

const at::Tensor& entry(const ParameterState& state, const char* name) {
  auto it = state.find(name);
  if (it == state.end() || !it->second.defined()) {
    throw std::logic_error(std::string("optimizer state: '") + name + "' is missing");
  }
  return it->second;
}

void require_only(const ParameterState& state, std::initializer_list<const char*> names) {
  for (const auto& [name, tensor] : state) {
    bool known = false;
    for (const char* n : names) known = known || name == n;
    if (!known)
      throw std::logic_error("optimizer state: '" + name + "' is not kept by this optimizer");
  }
}

// Adam's and AdamW's state: the same three entries in two libtorch classes.
template <class State, class Optim>
ParameterState adam_state(Optim& adam, const at::Tensor& parameter) {
  auto& states = adam.state();
  auto it = states.find(compat::optimizer_state_key(parameter));
  if (it == states.end()) return {};
  auto& s = static_cast<State&>(*it->second);
  return {{kStep, at::scalar_tensor(static_cast<double>(s.step()), at::kFloat)},
          {kExpAvg, s.exp_avg()},
          {kExpAvgSq, s.exp_avg_sq()}};
}

template <class State, class Optim>
void set_adam_state(Optim& adam, const at::Tensor& parameter, const ParameterState& state) {
  auto& states = adam.state();
  const auto key = compat::optimizer_state_key(parameter);
  if (state.empty()) {
    states.erase(key);
    return;
  }
  require_only(state, {kStep, kExpAvg, kExpAvgSq});
  auto fresh = std::make_unique<State>();
  fresh->step(static_cast<int64_t>(entry(state, kStep).item<double>()));
  fresh->exp_avg(entry(state, kExpAvg));
  fresh->exp_avg_sq(entry(state, kExpAvgSq));
  states[key] = std::move(fresh);
}

}  // namespace

ParameterState parameter_state(torch::optim::Optimizer& optimizer, const at::Tensor& parameter) {
  if (auto* sgd = dynamic_cast<MultiTensorSGD*>(&optimizer)) {
    const at::Tensor buffer = sgd->momentum_buffer(parameter);
    if (!buffer.defined()) return {};
    return {{kMomentum, buffer}};
  }
  if (auto* adam = dynamic_cast<torch::optim::Adam*>(&optimizer)) {
    return adam_state<torch::optim::AdamParamState>(*adam, parameter);
  }
  if (auto* adamw = dynamic_cast<torch::optim::AdamW*>(&optimizer)) {
    return adam_state<torch::optim::AdamWParamState>(*adamw, parameter);
  }
  throw std::logic_error("optimizer state: not an optimizer make_optimizer builds");
}

void set_parameter_state(torch::optim::Optimizer& optimizer, const at::Tensor& parameter,
                         const ParameterState& state) {
  if (auto* sgd = dynamic_cast<MultiTensorSGD*>(&optimizer)) {
    require_only(state, {kMomentum});
    sgd->set_momentum_buffer(parameter, state.empty() ? at::Tensor() : entry(state, kMomentum));
    return;
  }
  if (auto* adam = dynamic_cast<torch::optim::Adam*>(&optimizer)) {
    set_adam_state<torch::optim::AdamParamState>(*adam, parameter, state);
    return;
  }
  if (auto* adamw = dynamic_cast<torch::optim::AdamW*>(&optimizer)) {
    set_adam_state<torch::optim::AdamWParamState>(*adamw, parameter, state);
    return;
  }
  throw std::logic_error("optimizer state: not an optimizer make_optimizer builds");
}

at::Tensor empty_state_entry(const std::string& name, const at::Tensor& parameter) {
  if (name == kStep) return at::zeros({}, at::kFloat);
  return at::zeros(parameter.sizes(), parameter.options().device(at::kCPU));
}

int64_t state_bytes(torch::optim::Optimizer& optimizer) {
  int64_t bytes = 0;
  for (auto& group : optimizer.param_groups()) {
    for (const at::Tensor& p : group.params()) {
      for (const auto& [name, t] : parameter_state(optimizer, p)) {
        bytes += t.numel() * static_cast<int64_t>(t.element_size());
      }
    }
  }
  return bytes;
}

std::vector<std::string> kept_state_names(const OptimizerSpec& spec) {
  if (spec.kind != OptimizerKind::kSgd) return {kStep, kExpAvg, kExpAvgSq};
  if (spec.momentum != 0) return {kMomentum};
  return {};
}

const std::vector<std::string>& state_names() {
  static const std::vector<std::string> names = {kMomentum, kStep, kExpAvg, kExpAvgSq};
  return names;
}

bool shaped_like_parameter(const std::string& name) { return name != kStep; }

}  // namespace ddpbench::scenarios
