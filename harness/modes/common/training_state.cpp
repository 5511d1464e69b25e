// training_state.cpp — see training_state.h.
#include "modes/common/training_state.h"

#include <torch/torch.h>

#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "modes/common/model_state.h"

namespace ddpbench::modes {
namespace {

torch::optim::SGD& as_sgd(torch::optim::Optimizer& optimizer) {
  auto* sgd = dynamic_cast<torch::optim::SGD*>(&optimizer);
  if (sgd == nullptr) throw std::logic_error("training state: only SGD is supported");
  return *sgd;
}

// The optimizer keys per-parameter state by the parameter's TensorImpl: as the pointer printed to
// a string in libtorch 1.13, as the pointer itself in later releases.
using StateKey = typename std::remove_reference_t<
    decltype(std::declval<torch::optim::Optimizer&>().state())>::key_type;

template <typename Key>
Key key_of(const at::Tensor& p) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream s;
    s << p.unsafeGetTensorImpl();
    return s.str();
  } else {
    return static_cast<Key>(p.unsafeGetTensorImpl());
  }
}

}  // namespace

TrainingState capture_training_state(const torch::nn::Module& module,
                                     torch::optim::Optimizer& optimizer) {
  TrainingState s;
  for (const auto& p : module.parameters()) s.parameters.push_back(host_copy(p));
  for (const auto& b : module.buffers()) s.buffers.push_back(host_copy(b));
  auto& state = as_sgd(optimizer).state();
  for (const auto& p : module.parameters()) {
    auto it = state.find(key_of<StateKey>(p));
    if (it == state.end()) {
      s.momentum.clear();  // no momentum yet (before the first step, or momentum 0)
      break;
    }
    auto& sgd_state = static_cast<torch::optim::SGDParamState&>(*it->second);
    s.momentum.push_back(host_copy(sgd_state.momentum_buffer()));
  }
  return s;
}

void load_training_state(torch::nn::Module& module, torch::optim::Optimizer& optimizer,
                         const TrainingState& s) {
  torch::NoGradGuard no_grad;
  auto params = module.parameters();
  auto buffers = module.buffers();
  for (size_t i = 0; i < params.size(); ++i) params[i].copy_(s.parameters[i]);
  for (size_t i = 0; i < buffers.size(); ++i) buffers[i].copy_(s.buffers[i]);
  auto& state = as_sgd(optimizer).state();
  for (size_t i = 0; i < params.size(); ++i) {
    const StateKey key = key_of<StateKey>(params[i]);
    if (s.momentum.empty()) {
      state.erase(key);
      continue;
    }
    auto fresh = std::make_unique<torch::optim::SGDParamState>();
    // On the parameter's device, as the optimizer's own buffer would be.
    fresh->momentum_buffer(
        s.momentum[i].to(params[i].device(), /*non_blocking=*/false, /*copy=*/true));
    state[key] = std::move(fresh);
  }
}

}  // namespace ddpbench::modes
