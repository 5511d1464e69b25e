// toy_cnn.cpp — scenario `toy_cnn`: the PyTorch CIFAR-10 tutorial network and recipe
// (CrossEntropyLoss, SGD lr 0.001 momentum 0.9, batch 16, Normalize((0.5,)*3, (0.5,)*3)).
// No BatchNorm: every mode must agree with single-device training.
#include <torch/utils.h>

#include "scenarios/cifar_data.h"
#include "scenarios/models/toy_cnn_net.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioSpec toy_cnn_scenario() {
  ScenarioSpec s;
  s.name = "toy_cnn";
  s.summary = "CIFAR-10 tutorial CNN (2 conv + 3 fc), SGD lr 0.001 momentum 0.9";
  s.model_name = "tutorial CNN";
  s.dataset_name = "CIFAR-10 (synthetic unless --data-dir)";
  s.reads_data_dir = true;
  s.global_batch = 16;
  s.steps = 20;
  s.seed = 0;
  s.loss = LossKind::kCrossEntropy;
  s.optimizer.lr = 0.001;
  s.optimizer.momentum = 0.9;
  s.torch_oracle_model = "toy_cnn";
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    return torch::nn::AnyModule(models::ToyCnn());
  };
  s.build_dataset = [](const BuildRequest& request) {
    data::ImageTransformOptions
        transform;  // the tutorial: ToTensor + Normalize((0.5,)*3, (0.5,)*3)
    transform.mean = {0.5F, 0.5F, 0.5F};
    transform.stddev = {0.5F, 0.5F, 0.5F};
    transform.seed = request.seed;
    return make_cifar_dataset(request, transform);
  };
  s.build_eval_dataset = [](const BuildRequest& request) {
    data::ImageTransformOptions transform;
    transform.mean = {0.5F, 0.5F, 0.5F};
    transform.stddev = {0.5F, 0.5F, 0.5F};
    return make_cifar_eval_set(request, transform);
  };
  return s;
}

}  // namespace ddpbench::scenarios
