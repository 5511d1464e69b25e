// training_recipe.cpp — see training_recipe.h.
#include "scenarios/training_recipe.h"

#include <fmt/format.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/adam.h>

#include "scenarios/optim/multi_tensor_sgd.h"

namespace ddpbench::scenarios {

at::Tensor compute_loss(LossKind kind, const at::Tensor& output, const at::Tensor& target) {
  switch (kind) {
    case LossKind::kCrossEntropy:
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

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec,
                                                        std::vector<at::Tensor> parameters) {
  if (spec.kind == OptimizerKind::kAdam) {
    // libtorch's Adam: torch.optim.Adam's single-tensor update (amsgrad off), the same arithmetic
    // in 1.13 and 2.x (tests/unit/scenarios_text_recipe_test.cpp,
    // Adam.MatchesTorchOptimAdamsFormula, pins it to the formula).
    return std::make_unique<torch::optim::Adam>(std::move(parameters),
                                                torch::optim::AdamOptions(spec.lr)
                                                    .betas({spec.beta1, spec.beta2})
                                                    .eps(spec.eps)
                                                    .weight_decay(spec.weight_decay));
  }
  // Multi-tensor kernels, as Python's SGD on CUDA; same arithmetic as torch::optim::SGD.
  return std::make_unique<MultiTensorSGD>(std::move(parameters),
                                          torch::optim::SGDOptions(spec.lr)
                                              .momentum(spec.momentum)
                                              .dampening(spec.dampening)
                                              .weight_decay(spec.weight_decay)
                                              .nesterov(spec.nesterov));
}

// BCE on one-hot targets averages B x C elements, C the same for every sample: a per-sample mean.
bool loss_is_sample_mean(LossKind kind) { return kind != LossKind::kRmse; }

bool loss_takes_class_labels(LossKind kind) {
  return kind == LossKind::kCrossEntropy || kind == LossKind::kBceOneHot;
}

std::string describe_optimizer(const OptimizerSpec& o, std::optional<double> clip_grad_norm) {
  std::string s;
  if (o.kind == OptimizerKind::kAdam) {
    s = fmt::format("Adam(lr={}, betas=({}, {}), eps={}", o.lr, o.beta1, o.beta2, o.eps);
  } else {
    s = fmt::format("SGD(lr={}", o.lr);
    if (o.momentum != 0) s += fmt::format(", momentum={}", o.momentum);
    if (o.dampening != 0) s += fmt::format(", dampening={}", o.dampening);
    if (o.nesterov) s += ", nesterov=True";
  }
  if (o.weight_decay != 0) s += fmt::format(", weight_decay={}", o.weight_decay);
  s += ")";
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
