// grad_accum.cpp — scenario `grad_accum`: gradient accumulation (issue 24). Each optimizer step
// takes a global batch of A x B = 4 x 8 = 32 samples. single trains it in one pass; dp and ddp
// run A = 4 micro-steps of B = 8 samples (each rank its share of each), each micro-loss scaled by
// 1/A, and step once — DDP inside no_sync() for the first A-1 micro-steps, so only the last
// backward allreduces. The claim checked: accumulation equals training on the big batch.
// `--no-sync off` forgets no_sync (A-1 extra allreduces per step, same result);
// `--accumulation-steps` changes A.
#include <torch/types.h>
#include <torch/utils.h>

#include "scenarios/models/mlp_net.h"
#include "scenarios/randn_regression.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioSpec grad_accum_scenario() {
  ScenarioSpec s;
  s.name = "grad_accum";
  s.summary = "gradient accumulation: 4 micro-steps (ddp no_sync) equal one batch of 32";
  s.model_name = "MLP 10 -> 32 (tanh) -> 10";
  s.dataset_name = "randn(128,10) -> randn(128,10)";
  s.global_batch = 32;  // A x B: the batch of one optimizer step
  s.accumulation_steps = 4;
  s.steps = 6;  // crosses into the second epoch (4 steps each): a reshuffle inside the run
  s.seed = 7;
  s.loss = LossKind::kMse;
  // Momentum and weight decay act on the accumulated gradient once per optimizer step: an
  // accumulation that stepped per micro-step, or scaled wrongly, changes them visibly.
  s.optimizer.lr = 0.05;
  s.optimizer.momentum = 0.9;
  s.optimizer.weight_decay = 1e-3;
  s.build_dataset = [](const BuildRequest& request) {
    return make_randn_regression(128, request.seed);
  };
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    return torch::nn::AnyModule(models::Mlp(10, 32, 10));
  };
  return s;
}

}  // namespace ddpbench::scenarios
