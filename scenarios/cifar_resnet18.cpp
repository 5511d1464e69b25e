// cifar_resnet18.cpp — scenario `cifar_resnet18` (the default): torchvision ResNet-18 with 10
// classes on CIFAR-10 with RandomCrop(32, 4) + RandomHorizontalFlip, CrossEntropyLoss,
// SGD lr 0.02 momentum 0.9 nesterov weight_decay 1e-4, global batch 256.
#include <torch/utils.h>

#include "scenarios/builtin.h"
#include "scenarios/cifar_data.h"
#include "scenarios/models/resnet.h"

namespace ddpbench::scenarios {

ScenarioSpec cifar_resnet18_scenario() {
  ScenarioSpec s;
  s.name = "cifar_resnet18";
  s.summary = "torchvision ResNet-18 (10 classes), augmented CIFAR-10, SGD nesterov";
  s.model_name = "resnet18(num_classes=10)";
  s.dataset_name = "CIFAR-10 (synthetic unless --data-dir), crop+flip";
  s.global_batch = 256;
  s.steps = 10;
  s.seed = 0;
  s.loss = LossKind::kCrossEntropy;
  s.optimizer = {/*lr=*/0.02, /*momentum=*/0.9, /*dampening=*/0.0, /*weight_decay=*/1e-4,
                 /*nesterov=*/true};
  // BatchNorm without SyncBN: each replica normalises with its own batch statistics.
  s.divergences = {
      {"ddp", "(running_mean|running_var)$",
       "BatchNorm without SyncBN: buffers are rank 0's local statistics after broadcast", true},
      {"ddp", ".*", "BatchNorm without SyncBN normalises each rank's local batch", true},
      {"dp", "(running_mean|running_var)$",
       "DataParallel keeps replica 0's running statistics (its chunk only)"},
      {"dp", ".*", "DataParallel normalises each replica's chunk with its own batch statistics"},
  };
  s.torch_oracle_model = "resnet18";
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    return torch::nn::AnyModule(models::ResNet18(10));
  };
  s.build_dataset = [](const BuildRequest& request) {
    return make_cifar_dataset(request, cifar_train_transform(request.seed));
  };
  return s;
}

}  // namespace ddpbench::scenarios
