// multi_tensor_sgd.cpp — see multi_tensor_sgd.h.
#include "scenarios/optim/multi_tensor_sgd.h"

#include <torch/torch.h>

#include <algorithm>
#include <utility>

#include "scenarios/optim/torch_version_compat.h"

namespace ddpbench::scenarios {

MultiTensorSGD::MultiTensorSGD(std::vector<at::Tensor> parameters, torch::optim::SGDOptions options)
    : torch::optim::SGD(std::move(parameters), std::move(options)) {}

MultiTensorSGD::MultiTensorSGD(std::vector<torch::optim::OptimizerParamGroup> groups,
                               torch::optim::SGDOptions defaults)
    : torch::optim::SGD(std::move(groups), std::move(defaults)) {}

at::Tensor MultiTensorSGD::momentum_buffer(const at::Tensor& parameter) {
  auto it = state_.find(compat::optimizer_state_key(parameter));
  if (it == state_.end()) return {};
  return static_cast<torch::optim::SGDParamState&>(*it->second).momentum_buffer();
}

void MultiTensorSGD::set_momentum_buffer(const at::Tensor& parameter, const at::Tensor& buffer) {
  const auto key = compat::optimizer_state_key(parameter);
  if (!buffer.defined()) {
    state_.erase(key);
    return;
  }
  auto fresh = std::make_unique<torch::optim::SGDParamState>();
  fresh->momentum_buffer(buffer);
  state_[key] = std::move(fresh);
}

at::Tensor& MultiTensorSGD::scratch(const at::Tensor& parameter) {
  at::Tensor& t = scratch_[parameter.unsafeGetTensorImpl()];
  if (!t.defined() || !t.sizes().equals(parameter.sizes()) || t.dtype() != parameter.dtype()) {
    t = at::empty_like(parameter, at::MemoryFormat::Contiguous);
  }
  return t;
}

// The foreach path below, one tensor at a time, with add_out into scratch where it allocates:
// the same kernels on the same operands, so the same bits.
void MultiTensorSGD::step_group_on_cpu(const torch::optim::SGDOptions& options,
                                       const std::vector<at::Tensor>& params,
                                       const std::vector<at::Tensor>& grads) {
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& p = params[i];
    at::Tensor step = grads[i];
    if (options.weight_decay() != 0) {
      step = at::add_out(scratch(p), grads[i], p, options.weight_decay());
    }
    if (options.momentum() != 0) {
      at::Tensor buffer = momentum_buffer(p);
      if (!buffer.defined()) {
        buffer = torch::clone(step).detach();
        set_momentum_buffer(p, buffer);
      } else {
        buffer.mul_(options.momentum());
        buffer.add_(step, 1 - options.dampening());
      }
      if (options.nesterov()) {
        // In place only when `step` is already the scratch (never into the gradient).
        step = at::add_out(scratch(p), step, buffer, options.momentum());
      } else {
        step = buffer;
      }
    }
    p.add_(step, -options.lr());
  }
}

at::Tensor MultiTensorSGD::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  at::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::SGDOptions&>(group.options());
    std::vector<at::Tensor> params;
    std::vector<at::Tensor> grads;
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      params.push_back(p);
      grads.push_back(p.grad());
    }
    if (params.empty()) continue;
    if (std::all_of(params.begin(), params.end(), [](const at::Tensor& p) { return p.is_cpu(); })) {
      step_group_on_cpu(options, params, grads);
      continue;
    }

    // d_p = grad + weight_decay * p: a new list, so the recorded gradients stay untouched.
    std::vector<at::Tensor> steps = options.weight_decay() != 0
                                        ? at::_foreach_add(grads, params, options.weight_decay())
                                        : grads;
    if (options.momentum() != 0) {
      // Parameters stepping for the first time start their buffer as a copy of d_p (SGD's rule);
      // the others decay theirs and add d_p, all in two multi-tensor kernels. One state lookup
      // per parameter: `buffers` holds every buffer in parameter order, and the in-place kernels
      // update the same tensors through `decaying`.
      std::vector<at::Tensor> buffers;
      std::vector<at::Tensor> decaying;
      std::vector<at::Tensor> decaying_steps;
      for (size_t i = 0; i < params.size(); ++i) {
        at::Tensor buffer = momentum_buffer(params[i]);
        if (!buffer.defined()) {
          buffer = torch::clone(steps[i]).detach();
          set_momentum_buffer(params[i], buffer);
        } else {
          decaying.push_back(buffer);
          decaying_steps.push_back(steps[i]);
        }
        buffers.push_back(buffer);
      }
      if (!decaying.empty()) {
        at::_foreach_mul_(decaying, options.momentum());
        at::_foreach_add_(decaying, decaying_steps, 1 - options.dampening());
      }
      // Out of place for nesterov: without weight decay `steps` are the gradients themselves.
      steps = options.nesterov() ? at::_foreach_add(steps, buffers, options.momentum())
                                 : std::move(buffers);
    }
    at::_foreach_add_(params, steps, -options.lr());
  }
  return loss;
}

}  // namespace ddpbench::scenarios
