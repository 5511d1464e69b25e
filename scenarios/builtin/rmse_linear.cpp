// rmse_linear.cpp — scenario `rmse_linear`: Linear(10, 10) trained on the square root of the mean
// squared error. The loss of a batch is not a mean of per-sample terms, so DDP, which averages the
// gradients of each rank's own loss, does not compute single-device training's gradient even
// without BatchNorm (PyTorch issues 24391, 49794; Lightning 6789). ddpbench must report that
// difference, name its cause, and still judge DDP exactly against a reference that averages
// per-rank losses.
#include <torch/nn/modules/linear.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "scenarios/randn_regression.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioSpec rmse_linear_scenario() {
  ScenarioSpec s;
  s.name = "rmse_linear";
  s.summary = "Linear(10,10) + sqrt(MSELoss): a loss that is not a mean of per-sample terms";
  s.model_name = "Linear(10, 10)";
  s.dataset_name = "randn(96,10) -> randn(96,10)";
  s.global_batch = 24;  // divisible by 1, 2, 3, 4, 6 and 8 ranks
  s.steps = 5;
  s.seed = 7;
  s.loss = LossKind::kRmse;
  s.optimizer = {/*lr=*/0.1, /*momentum=*/0.9, /*dampening=*/0.0, /*weight_decay=*/0.0,
                 /*nesterov=*/false};
  s.build_dataset = [](const BuildRequest& request) {
    return make_randn_regression(96, request.seed);
  };
  s.torch_oracle_model = "linear";
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    return torch::nn::AnyModule(torch::nn::Linear(10, 10));
  };
  return s;
}

}  // namespace ddpbench::scenarios
