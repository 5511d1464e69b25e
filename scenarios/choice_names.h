// choice_names.h — the scenario's enumerated choices that have a spelling users type (the loss,
// mixed precision, the optimizer, the learning-rate schedule): each enum and its names in one
// table, which the scenario keys (LOSS.NAME, TRAIN.AMP), the CLI's --loss and --amp, the batch
// export, checkpoints and --resume all read, so a new value is one row (name_table.h). Torch-free,
// so the CLI's choices cost no libtorch include.
#pragma once

#include "name_table.h"

namespace ddpbench::scenarios {

// kRmse is sqrt(MSELoss()): not a mean of per-sample terms, so the mean of per-rank losses that
// DDP differentiates is not the loss of the global batch (PyTorch issues 24391, 49794).
// kBceOneHot is binary_cross_entropy(sigmoid(output), one_hot(target).to(dtype)): a class label
// target, the mean over every (sample, class) element.
enum class LossKind { kCrossEntropy, kMse, kRmse, kBceOneHot };

// Automatic mixed precision (issue 34): forward and loss under autocast to bfloat16 or float16,
// parameters, gradients and optimizer state in float32; kFp16 adds a GradScaler.
enum class AmpKind { kOff, kBf16, kFp16 };

// torch.optim.SGD, Adam (L2 weight decay added to the gradient) and AdamW (decoupled weight decay,
// the parameter shrunk by lr x weight_decay before the moments' update).
enum class OptimizerKind { kSgd, kAdam, kAdamW };

// The learning rate each optimizer step uses (scenarios/optim/lr_schedule.h): the base rate,
// StepLR's decay every STEP_SIZE steps, nanoGPT's linear warmup then cosine to a floor, or
// OneCycleLR (which cycles the momentum too).
enum class ScheduleKind { kConstant, kStep, kWarmupCosine, kOneCycle };

// The spellings, default first.
inline constexpr NameTable<LossKind, 4> kLossNames{{
    {LossKind::kCrossEntropy, "cross_entropy"},
    {LossKind::kMse, "mse"},
    {LossKind::kRmse, "rmse"},
    {LossKind::kBceOneHot, "bce_one_hot"},
}};
inline constexpr NameTable<AmpKind, 3> kAmpNames{{
    {AmpKind::kOff, "off"},
    {AmpKind::kBf16, "bf16"},
    {AmpKind::kFp16, "fp16"},
}};

inline constexpr NameTable<OptimizerKind, 3> kOptimizerNames{{
    {OptimizerKind::kSgd, "sgd"},
    {OptimizerKind::kAdam, "adam"},
    {OptimizerKind::kAdamW, "adamw"},
}};
inline constexpr NameTable<ScheduleKind, 4> kScheduleNames{{
    {ScheduleKind::kConstant, "constant"},
    {ScheduleKind::kStep, "step"},
    {ScheduleKind::kWarmupCosine, "warmup_cosine"},
    {ScheduleKind::kOneCycle, "onecycle"},
}};

}  // namespace ddpbench::scenarios
