// cifar_resnet18.cpp — scenario `cifar_resnet18` (the default): torchvision ResNet-18 with 10
// classes on CIFAR-10 with RandomCrop(32, 4) + RandomHorizontalFlip, CrossEntropyLoss,
// SGD lr 0.02 momentum 0.9 nesterov weight_decay 1e-4, global batch 256.
#include <torch/utils.h>

#include "scenarios/cifar_data.h"
#include "scenarios/models/resnet.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioSpec cifar_resnet18_scenario() {
  ScenarioSpec s;
  s.name = "cifar_resnet18";
  s.summary = "torchvision ResNet-18 (10 classes), augmented CIFAR-10, SGD nesterov";
  s.model_name = "resnet18(num_classes=10)";
  s.dataset_name = "CIFAR-10 (synthetic unless --data-dir), crop+flip";
  s.reads_data_dir = true;
  s.global_batch = 256;
  s.steps = 10;
  s.seed = 0;
  s.loss = LossKind::kCrossEntropy;
  s.optimizer = {/*lr=*/0.02, /*momentum=*/0.9, /*dampening=*/0.0, /*weight_decay=*/1e-4,
                 /*nesterov=*/true};
  // No declared divergences: BatchNorm without SyncBN (per-rank statistics, rank 0's running
  // statistics) is modelled exactly by the single-device exact reference
  // (training/exact_reference.h), so every DP and DDP check is pass or fail. float64 free-running
  // over 5 steps at 6 samples per rank chunk: DDP's gradients differ from the exact reference by up
  // to 1.14e-11 (layer4.0.downsample.0.weight, step 4, measured on this project's CI machine):
  // rounding compounded through 20 BatchNorm layers. 1e-10 still catches a 1e-9 gradient error on
  // one rank of four (~2.5e-10 after averaging). Smaller chunks compound faster: at 4 samples per
  // chunk (K=3, batch 12) the gradient difference grows about 100x per step
  // (2.4e-15, 1.2e-12, 1.3e-11, 1.3e-9, 3.5e-8 at steps 0-4), so free-running float64 checks of
  // tiny per-rank batches need few steps; lockstep does not compound.
  s.tolerances.gradient_float64 = 1e-10;
  s.torch_oracle_model = "resnet18";
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    return torch::nn::AnyModule(models::ResNet(models::resnet18_shape(), 10));
  };
  s.build_dataset = [](const BuildRequest& request) {
    return make_cifar_dataset(request, cifar_train_transform(request.seed));
  };
  s.build_eval_dataset = [](const BuildRequest& request) {
    return make_cifar_eval_set(request, cifar_train_transform(request.seed));
  };
  // A ResNet-18 forward costs ~0.56 GFLOP a sample, and a dp/ddp run evaluates the set twice per
  // mode (the mode, then single-device): 128 samples keep the pass to seconds on a CPU.
  s.eval_size = 128;
  return s;
}

}  // namespace ddpbench::scenarios
