// linear_mse.cpp — scenario `linear_mse`: the single-device half of the seed notebook, exactly:
// torch.manual_seed(123); x = randn(20, 10); y = randn(20, 10); model = Linear(10, 10);
// MSELoss; SGD(lr=1); one step on the whole batch of 20.
#include <torch/nn/modules/linear.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "scenarios/randn_regression.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioSpec linear_mse_scenario() {
  ScenarioSpec s;
  s.name = "linear_mse";
  s.summary = "seed notebook: Linear(10,10) + MSELoss + SGD(lr=1) on randn(20,10) pairs";
  s.model_name = "Linear(10, 10)";
  s.dataset_name = "randn(20,10) -> randn(20,10)";
  s.global_batch = 20;
  s.steps = 1;
  s.seed = 123;
  s.shuffle = false;  // the notebook feeds the batch in order
  s.loss = LossKind::kMse;
  s.optimizer.lr = 1.0;
  s.build_dataset = [](const BuildRequest& request) {
    return make_randn_regression(20, request.seed);
  };
  s.torch_oracle_model = "linear";
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    // The notebook initialises the model after drawing x and y from the same generator: replay
    // those two draws so Linear's init sees the generator state Python's did.
    (void)torch::randn({20, 10});
    (void)torch::randn({20, 10});
    return torch::nn::AnyModule(torch::nn::Linear(10, 10));
  };
  return s;
}

}  // namespace ddpbench::scenarios
