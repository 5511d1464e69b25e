// tiny_resnet.cpp — scenario `tiny_resnet`: cifar_resnet18's recipe (augmented CIFAR-10,
// CrossEntropyLoss, SGD nesterov) on a ResNet of one BasicBlock per stage at a quarter of the
// widths (models::tiny_resnet_shape()). It has every structure that makes ResNet-18 hard to judge
// (BatchNorm after every conv, residual sums, strided downsampling, max-pool) at ~1/40 of the cost,
// so the BatchNorm, SyncBN and exact-reference properties are proven on it in seconds.
#include <torch/utils.h>

#include "scenarios/cifar_data.h"
#include "scenarios/models/resnet.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioSpec cifar_resnet18_scenario();  // scenarios/builtin/cifar_resnet18.cpp

ScenarioSpec tiny_resnet_scenario() {
  ScenarioSpec s = cifar_resnet18_scenario();
  s.name = "tiny_resnet";
  s.summary = "ResNet [1,1,1,1] at widths 16-128 on augmented CIFAR-10: BatchNorm at 1/40 the cost";
  s.model_name = "resnet(BasicBlock, [1,1,1,1], widths 16-128, num_classes=10)";
  s.global_batch = 32;
  s.torch_oracle_model = "tiny_resnet";  // reference/torch_ddp_oracle.py builds the same network
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    return torch::nn::AnyModule(models::ResNet(models::tiny_resnet_shape(), 10));
  };
  return s;
}

}  // namespace ddpbench::scenarios
