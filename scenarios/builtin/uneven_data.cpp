// uneven_data.cpp — scenario `uneven_data`: Linear(10, 10) + MSELoss + plain SGD on 100
// randn pairs, a dataset that no world size times batch divides, for several epochs. With
// --gpus 3 its global batch of 20 splits over the ranks as 7,7,6 (data/batch_plan.h), and every
// rank's sampler share of 34 (100 padded to 102; 33 with --drop-last, 1 dropped) lasts ranks 0
// and 1 five batches and rank 2 six: on each epoch's last step ranks 0 and 1 have joined (PyTorch's
// Join) and the global batch is rank 2's 4 (or 3) samples. DDP's mean of per-rank mean gradients
// over the initial world size is then not the global mean, so it is judged against the exact
// reference with the same uneven chunks; single and DP train on the global mean. Every epoch
// reshuffles (set_epoch).
#include <torch/nn/modules/linear.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "scenarios/randn_regression.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioSpec uneven_data_scenario() {
  ScenarioSpec s;
  s.name = "uneven_data";
  s.summary =
      "Linear(10,10) + MSELoss on 100 samples, batch 20: uneven rank batches (7,7,6 on 3 ranks), "
      "ranks joining at epoch ends, several epochs";
  s.model_name = "Linear(10, 10)";
  s.torch_oracle_model = "linear";  // reference/torch_ddp_oracle.py runs it under Join
  s.dataset_name = "randn(100,10) -> randn(100,10)";
  s.global_batch = 20;
  s.steps = 14;  // 6 steps per epoch on 3 ranks: two whole epochs and the start of a third
  s.seed = 11;
  s.loss = LossKind::kMse;
  // Plain SGD, an optimizer without state: PyTorch's Join takes no step on a joined rank, so
  // momentum would leave that rank's state behind and part the ranks at the next epoch's first
  // step (Note [PyTorch's Join, as it runs], modes/common/joined_batch.h; OPTIM.MOMENTUM 0.9
  // shows it, and the UnevenData tests do).
  s.optimizer = {/*lr=*/0.05, /*momentum=*/0.0, /*dampening=*/0.0, /*weight_decay=*/0.0,
                 /*nesterov=*/false};
  s.build_dataset = [](const BuildRequest& request) {
    return make_randn_regression(100, request.seed);
  };
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    return torch::nn::AnyModule(torch::nn::Linear(10, 10));
  };
  return s;
}

}  // namespace ddpbench::scenarios
