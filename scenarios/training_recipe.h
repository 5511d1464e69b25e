// training_recipe.h — the loss and optimizer factories every mode shares (docs/ARCHITECTURE.md,
// Note [Independent gradient paths], shared definition, separate gradient paths).
#pragma once

#include <torch/optim/optimizer.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenarios/optim/parameter_groups.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

// Mean-reduced loss, as torch.nn.CrossEntropyLoss() / MSELoss() with default reduction, the
// square root of MSELoss(), or F.binary_cross_entropy(sigmoid(output), one_hot(target)).
at::Tensor compute_loss(LossKind kind, const at::Tensor& output, const at::Tensor& target,
                        double label_smoothing = 0.0);
// The scenario's loss: its kind and, for cross-entropy, its label smoothing.
at::Tensor compute_loss(const ScenarioSpec& spec, const at::Tensor& output,
                        const at::Tensor& target);

// Whether the loss of a batch is the mean of per-sample terms, so that the mean of equal-sized
// chunks' losses is the loss of the whole batch (true for cross-entropy, MSE and BCE on one-hot
// targets, not for RMSE). The exact reference of DDP reads it (training/exact_reference.cpp).
bool loss_is_sample_mean(LossKind kind);

// Whether the loss takes int64 class labels (cross-entropy, BCE on one-hot) rather than
// regression targets (MSE, RMSE): what data a loss fits, for scenario files and --data.
bool loss_takes_class_labels(LossKind kind);

// `spec`'s optimizer over `parameters`, in the parameter groups OPTIM.NO_DECAY makes
// (optim/parameter_groups.h), which read `names` (the model's name of each parameter, in order;
// may be empty when spec.no_decay is).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerSpec& spec,
                                                        std::vector<at::Tensor> parameters,
                                                        const std::vector<std::string>& names = {});

// A parameter group's weight decay (OPTIM.WEIGHT_DECAY, 0 for the no-decay group) and its share of
// the scheduled rate (1, OPTIM.NO_DECAY_LR_SCALE for the no-decay group): what the optimizer is
// built with and what a checkpoint's param_groups list.
double group_weight_decay(const OptimizerSpec& spec, const ParameterGroupIndices& group);
double group_lr_scale(const OptimizerSpec& spec, const ParameterGroupIndices& group);
// Every group's learning rate at optimizer step `step`, as a schedule sets g['lr'] before
// optimizer.step(): optim/lr_schedule.h group_lr of the group's share.
void set_scheduled_rates(torch::optim::Optimizer& optimizer, const OptimizerSpec& spec,
                         int64_t step);
// Every group's momentum as OneCycleLR cycles it: Adam's and AdamW's betas[0], SGD's momentum.
void set_momentum(torch::optim::Optimizer& optimizer, double momentum);
// Each group's weight decay, in group order, and their replacement (the `decay` fault).
std::vector<double> weight_decays(torch::optim::Optimizer& optimizer);
void set_weight_decays(torch::optim::Optimizer& optimizer, const std::vector<double>& decays);

const char* loss_name(LossKind kind);
// The scenario's loss as its Python constructor reads: "CrossEntropyLoss", or
// "CrossEntropyLoss(label_smoothing=0.1)".
std::string describe_loss(const ScenarioSpec& spec);

// "off", "bf16", "fp16": the --amp spelling.
const char* amp_name(AmpKind kind);
// The dtype autocast computes in under `kind` (bfloat16, float16), or none when off.
std::optional<at::ScalarType> autocast_dtype_of(AmpKind kind);

// The optimizer as its Python constructor reads, e.g. "SGD(lr=0.01, momentum=0.9)", followed by
// " + clip_grad_norm_(max_norm=M)" when the gradients are clipped before it steps.
std::string describe_optimizer(const OptimizerSpec& spec,
                               std::optional<double> clip_grad_norm = std::nullopt);

}  // namespace ddpbench::scenarios
