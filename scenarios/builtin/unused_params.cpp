// unused_params.cpp — scenario `unused_params`: a branch that gets no gradient on some steps
// (issue 24). GatedHeads routes each sample through head_a or head_b by a gate column; samples
// are fed in order (no shuffle) and the gate follows the sample index in blocks of 8, one default
// global batch: on steps 0, 3, ... no sample takes head_b, on steps 1, 4, ... none takes head_a,
// on steps 2, 5, ... only the block's first sample takes head_b (with 2 ranks: only rank 0, only
// DP replica 0). DDP must run with --find-unused-parameters: without it the reducer names the
// parameters that got no gradient and the run stops (exit 3). With it, an unused parameter is
// reduced as zeros on the ranks that did not use it, and keeps .grad None where no rank used it
// and it had none — PyTorch's rule, which makes DDP's gradients compare with single-device's
// including which are None (a None against zeros fails the comparison).
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "data/tensor_dataset.h"
#include "scenarios/models/gated_heads_net.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {
namespace {

constexpr int64_t kSamples = 48;
constexpr int64_t kBlock = 8;

// 1 when sample `i` takes head_b: every sample of blocks 1, 4, ..., the first of blocks 2, 5, ...
double gate_of(int64_t i) {
  const int64_t phase = (i / kBlock) % 3;
  return phase == 1 || (phase == 2 && i % kBlock == 0) ? 1.0 : 0.0;
}

std::shared_ptr<const data::Dataset> gated_data(int64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(static_cast<uint64_t>(seed));
  const int64_t features = models::GatedHeadsImpl::kFeatures;
  at::Tensor inputs = at::randn({kSamples, features + 1}, gen);
  at::Tensor targets = at::randn({kSamples, models::GatedHeadsImpl::kOutputs}, gen);
  for (int64_t i = 0; i < kSamples; ++i) inputs[i][features] = gate_of(i);
  return std::make_shared<data::TensorDataset>(
      inputs, targets, "randn(48,9) + gate column (by sample index) -> randn(48,10)");
}

}  // namespace

ScenarioSpec unused_params_scenario() {
  ScenarioSpec s;
  s.name = "unused_params";
  s.summary = "a head unused on some steps: ddp needs --find-unused-parameters";
  s.model_name = "trunk + 2 gated heads";  // Linear(9,16)+tanh; head_a, head_b Linear(16,10)
  s.dataset_name = "randn(48,9) + index gate -> randn(48,10)";
  s.global_batch = kBlock;  // one gate block per step (blocks follow the default batch)
  s.steps = 6;              // two rounds of the three gate patterns
  s.seed = 11;
  s.shuffle = false;  // the gate pattern is per step only in sample order
  s.loss = LossKind::kMse;
  // Momentum and weight decay act on a zero gradient and skip a None one: with them the update
  // tells the two apart, so DDP must give None exactly where single-device training has None.
  // A head never used yet has no momentum buffer while the trunk has one, which the lockstep
  // state transfer carries per parameter.
  s.optimizer.lr = 0.1;
  s.optimizer.momentum = 0.9;
  s.optimizer.weight_decay = 1e-2;
  s.build_dataset = [](const BuildRequest& request) { return gated_data(request.seed); };
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    return torch::nn::AnyModule(models::GatedHeads());
  };
  s.torch_oracle_model = "gated_heads";  // reference/torch_ddp_oracle.py builds the same network
  return s;
}

}  // namespace ddpbench::scenarios
