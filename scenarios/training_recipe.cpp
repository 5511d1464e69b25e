// training_recipe.cpp — see training_recipe.h.
#include "scenarios/training_recipe.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>

#include <stdexcept>
#include <type_traits>

#include "scenarios/optim/lr_schedule.h"
#include "scenarios/optim/multi_tensor_adam.h"
#include "scenarios/optim/multi_tensor_sgd.h"
#include "scenarios/optim/parameter_groups.h"

namespace ddpbench::scenarios {

at::Tensor compute_loss(LossKind kind, const at::Tensor& output, const at::Tensor& target,
                        double label_smoothing) {
  switch (kind) {
    case LossKind::kCrossEntropy:
      if (label_smoothing != 0) {
        return torch::nn::functional::cross_entropy(
            output, target,
            torch::nn::functional::CrossEntropyFuncOptions().label_smoothing(label_smoothing));
      }
      return torch::nn::functional::cross_entropy(output, target);
    case LossKind::kMse:
      return torch::nn::functional::mse_loss(output, target);
    case LossKind::kRmse:
      return torch::nn::functional::mse_loss(output, target).sqrt();
    case LossKind::kBceOneHot: {
      // F.one_hot is int64; BCE needs the probabilities' dtype (float32 or float64).
      const at::Tensor one_hot = at::one_hot(target, output.size(1)).to(output.scalar_type());
      return torch::nn::functional::binary_cross_entropy(output.sigmoid(), one_hot);
    }
  }
  throw std::logic_error("unknown loss kind");
}

namespace {

// The options of `spec`'s optimizer with weight decay `weight_decay` (a group's).
std::unique_ptr<torch::optim::OptimizerOptions> options_of(const OptimizerSpec& spec,
                                                           double weight_decay) {
  switch (spec.kind) {
    case OptimizerKind::kAdam:
      return std::make_unique<torch::optim::AdamOptions>(torch::optim::AdamOptions(spec.lr)
                                                             .betas({spec.beta1, spec.beta2})
                                                             .eps(spec.eps)
                                                             .weight_decay(weight_decay));
    case OptimizerKind::kAdamW:
      return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(spec.lr)
                                                              .betas({spec.beta1, spec.beta2})
                                                              .eps(spec.eps)
                                                              .weight_decay(weight_decay));
    case OptimizerKind::kSgd:
      break;
  }
  return std::make_unique<torch::optim::SGDOptions>(torch::optim::SGDOptions(spec.lr)
                                                        .momentum(spec.momentum)
                                                        .dampening(spec.dampening)
                                                        .weight_decay(weight_decay)
                                                        .nesterov(spec.nesterov));
}

// The optimizer's groups (optim/parameter_groups.h), each with its weight decay and base rate,
// and each group's share of the scheduled rate in `scales` (ScaledGroups), in the same order.
std::vector<torch::optim::OptimizerParamGroup> parameter_groups(
    const OptimizerSpec& spec, const std::vector<at::Tensor>& parameters,
    const std::vector<std::string>& names, std::vector<double>& scales) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  for (const ParameterGroupIndices& g : parameter_group_indices(spec.no_decay, names, parameters)) {
    std::vector<at::Tensor> members;
    for (size_t i : g.members) members.push_back(parameters[i]);
    groups.emplace_back(std::move(members), options_of(spec, group_weight_decay(spec, g)));
    scales.push_back(group_lr_scale(spec, g));
    groups.back().options().set_lr(spec.lr * scales.back());
  }
  return groups;
}

template <class Built>
std::unique_ptr<torch::optim::Optimizer> with_scales(std::unique_ptr<Built> optimizer,
                                                     std::vector<double> scales) {
  optimizer->set_lr_scales(std::move(scales));
  return optimizer;
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec,
                                                        std::vector<at::Tensor> parameters,
                                                        const std::vector<std::string>& names) {
  std::vector<double> scales;
  std::vector<torch::optim::OptimizerParamGroup> groups =
      parameter_groups(spec, parameters, names, scales);
  switch (spec.kind) {
    case OptimizerKind::kAdam:
      // libtorch's Adam (torch.optim.Adam's single-tensor update, amsgrad off, pinned to the
      // formula by tests/unit/scenarios_text_recipe_test.cpp) in multi-tensor kernels, bitwise
      // libtorch's on the CPU, as Python's Adam on CUDA (foreach=True).
      return with_scales(std::make_unique<MultiTensorAdam>(
                             std::move(groups), static_cast<const torch::optim::AdamOptions&>(
                                                    *options_of(spec, spec.weight_decay))),
                         std::move(scales));
    case OptimizerKind::kAdamW:
      // libtorch's AdamW (torch.optim.AdamW's single-tensor update in 1.13: p *= 1 - lr * wd,
      // then Adam's moments; 2.x's moments use lerp_, equal to rounding; pinned to the formula by
      // tests/unit/scenarios_optimizer_recipe_test.cpp) in multi-tensor kernels, as Adam above.
      return with_scales(std::make_unique<MultiTensorAdamW>(
                             std::move(groups), static_cast<const torch::optim::AdamWOptions&>(
                                                    *options_of(spec, spec.weight_decay))),
                         std::move(scales));
    case OptimizerKind::kSgd:
      break;
  }
  // Multi-tensor kernels, as Python's SGD on CUDA; same arithmetic as torch::optim::SGD.
  return with_scales(std::make_unique<MultiTensorSGD>(std::move(groups),
                                                      static_cast<const torch::optim::SGDOptions&>(
                                                          *options_of(spec, spec.weight_decay))),
                     std::move(scales));
}

double group_weight_decay(const OptimizerSpec& spec, const ParameterGroupIndices& group) {
  return group.decays ? spec.weight_decay : 0.0;
}

double group_lr_scale(const OptimizerSpec& spec, const ParameterGroupIndices& group) {
  return group.decays ? 1.0 : spec.no_decay_lr_scale;
}

namespace {

// Each group's share of the scheduled rate, one per param_groups() entry (optim/scaled_groups.h).
std::vector<double> lr_scales(const torch::optim::Optimizer& optimizer) {
  const auto* scaled = dynamic_cast<const ScaledGroups*>(&optimizer);
  std::vector<double> scales = scaled != nullptr ? scaled->lr_scales() : std::vector<double>{};
  scales.resize(optimizer.param_groups().size(), 1.0);
  return scales;
}

}  // namespace

void set_scheduled_rates(torch::optim::Optimizer& optimizer, const OptimizerSpec& spec,
                         int64_t step) {
  const std::vector<double> scales = lr_scales(optimizer);
  for (size_t i = 0; i < scales.size(); ++i) {
    optimizer.param_groups()[i].options().set_lr(group_lr(spec.schedule, spec.lr, scales[i], step));
  }
}

namespace {

// Calls `f` with each group's options as the class make_optimizer built them with.
template <class F>
void for_each_group_options(torch::optim::Optimizer& optimizer, F&& f) {
  for (auto& group : optimizer.param_groups()) {
    auto& o = group.options();
    if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&o)) {
      f(*adamw);
    } else if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&o)) {
      f(*adam);
    } else {
      f(static_cast<torch::optim::SGDOptions&>(o));
    }
  }
}

}  // namespace

void set_momentum(torch::optim::Optimizer& optimizer, double momentum) {
  for_each_group_options(optimizer, [momentum](auto& o) {
    if constexpr (std::is_same_v<std::decay_t<decltype(o)>, torch::optim::SGDOptions>) {
      o.momentum(momentum);
    } else {
      o.betas({momentum, std::get<1>(o.betas())});
    }
  });
}

std::vector<double> weight_decays(torch::optim::Optimizer& optimizer) {
  std::vector<double> out;
  for_each_group_options(optimizer, [&out](auto& o) { out.push_back(o.weight_decay()); });
  return out;
}

void set_weight_decays(torch::optim::Optimizer& optimizer, const std::vector<double>& decays) {
  if (decays.size() != optimizer.param_groups().size()) {
    throw std::logic_error("set_weight_decays: one per group");
  }
  size_t i = 0;
  for_each_group_options(optimizer, [&](auto& o) { o.weight_decay(decays[i++]); });
}

at::Tensor compute_loss(const ScenarioSpec& spec, const at::Tensor& output,
                        const at::Tensor& target) {
  return compute_loss(spec.loss, output, target, spec.label_smoothing);
}

// BCE on one-hot targets averages B x C elements, C the same for every sample: a per-sample mean.
bool loss_is_sample_mean(LossKind kind) { return kind != LossKind::kRmse; }

bool loss_takes_class_labels(LossKind kind) {
  return kind == LossKind::kCrossEntropy || kind == LossKind::kBceOneHot;
}

std::string describe_optimizer(const OptimizerSpec& o, std::optional<double> clip_grad_norm) {
  std::string s;
  if (o.kind != OptimizerKind::kSgd) {
    s = fmt::format("{}(lr={}, betas=({}, {}), eps={}",
                    o.kind == OptimizerKind::kAdam ? "Adam" : "AdamW", o.lr, o.beta1, o.beta2,
                    o.eps);
  } else {
    s = fmt::format("SGD(lr={}", o.lr);
    if (o.momentum != 0) s += fmt::format(", momentum={}", o.momentum);
    if (o.dampening != 0) s += fmt::format(", dampening={}", o.dampening);
    if (o.nesterov) s += ", nesterov=True";
  }
  // AdamW's default weight_decay is 0.01 in Python: written always, so the line reads true.
  if (o.weight_decay != 0 || o.kind == OptimizerKind::kAdamW) {
    s += fmt::format(", weight_decay={}", o.weight_decay);
  }
  s += ")";
  if (!o.no_decay.empty())
    s += fmt::format(
        " with weight_decay=0{} for [{}]",
        o.no_decay_lr_scale != 1 ? fmt::format(" and lr x {}", o.no_decay_lr_scale) : "",
        fmt::join(o.no_decay, ", "));
  if (const std::string sched = describe_schedule(o.schedule); !sched.empty()) s += " + " + sched;
  if (clip_grad_norm) s += fmt::format(" + clip_grad_norm_(max_norm={})", *clip_grad_norm);
  return s;
}

const char* loss_name(LossKind kind) {
  switch (kind) {
    case LossKind::kCrossEntropy:
      return "CrossEntropyLoss";
    case LossKind::kMse:
      return "MSELoss";
    case LossKind::kRmse:
      return "sqrt(MSELoss)";
    case LossKind::kBceOneHot:
      return "binary_cross_entropy(sigmoid, one_hot)";
  }
  return "?";
}

std::string describe_loss(const ScenarioSpec& spec) {
  if (spec.label_smoothing == 0) return loss_name(spec.loss);
  return fmt::format("{}(label_smoothing={})", loss_name(spec.loss), spec.label_smoothing);
}

const char* amp_name(AmpKind kind) { return name_in(kAmpNames, kind).data(); }

std::optional<at::ScalarType> autocast_dtype_of(AmpKind kind) {
  switch (kind) {
    case AmpKind::kOff:
      return std::nullopt;
    case AmpKind::kBf16:
      return at::kBFloat16;
    case AmpKind::kFp16:
      return at::kHalf;
  }
  return std::nullopt;
}

}  // namespace ddpbench::scenarios
