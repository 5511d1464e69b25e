// modes_data_parallel_path_test.cpp — DataParallel-style mode: on a model without BatchNorm it
// computes what single-device training computes (float64, tight); with BatchNorm only replica
// 0's running statistics survive, i.e. the statistics of rank 0's chunk alone, as in PyTorch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data/tensor_dataset.h"
#include "scenarios/models/batch_norm.h"
#include "scenarios/registry.h"
#include "support/mode_training.h"

namespace ddpbench::modes::data_parallel {
namespace {

using testing::train_data_parallel;
using testing::train_single;

TEST(DataParallel, EqualsSingleDeviceWithoutBatchNorm) {
  const auto registry = scenarios::builtin_registry();
  const auto& spec = registry.get("toy_cnn");
  auto a = scenarios::instantiate(spec, {0, ""});
  auto b = scenarios::instantiate(spec, {0, ""});
  const data::GlobalBatchPlan plan({a.dataset->size(), 3, true, 0, false}, 12);
  const auto single = train_single(spec, a, plan, 4, at::kDouble);
  const auto dp = train_data_parallel(spec, b, plan, 4, at::kDouble);
  ASSERT_EQ(dp.losses.size(), 4u);
  for (size_t s = 0; s < 4; ++s) EXPECT_NEAR(dp.losses[s], single.losses[s], 1e-13);
  for (size_t i = 0; i < single.final_state.size(); ++i) {
    const double diff =
        (dp.final_state[i].second - single.final_state[i].second).abs().max().item<double>();
    EXPECT_LT(diff, 1e-13) << single.final_state[i].first;
  }
}

// BatchNorm alone, so the running statistics are those of the raw inputs.
struct BnOnlyImpl : torch::nn::Cloneable<BnOnlyImpl> {
  BnOnlyImpl() { reset(); }
  void reset() override { bn = register_module("bn", scenarios::models::BatchNorm2d(2)); }
  at::Tensor forward(at::Tensor x) { return bn(x); }
  scenarios::models::BatchNorm2d bn{nullptr};
};
TORCH_MODULE(BnOnly);

TEST(DataParallel, OnlyReplicaZerosBufferUpdatesPersist) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(3);
  const at::Tensor inputs = at::randn({8, 2, 3, 3}, gen).to(at::kDouble) * 2 + 1;
  scenarios::ScenarioSpec spec;
  spec.loss = scenarios::LossKind::kMse;
  spec.optimizer.lr = 0.0;
  scenarios::ScenarioInstance instance{
      torch::nn::AnyModule(BnOnly()),
      std::make_shared<data::TensorDataset>(inputs, at::zeros_like(inputs), "bn test")};
  // Two replicas, no shuffle: replica 0's chunk is samples 0, 2, 4, 6 (indices[0::2]).
  const data::GlobalBatchPlan plan({8, 2, false, 0, false}, 8);
  const auto r = train_data_parallel(spec, instance, plan, 1, at::kDouble);
  const at::Tensor chunk0 = inputs.index_select(0, at::tensor({0, 2, 4, 6}));
  const at::Tensor per_channel = chunk0.transpose(0, 1).reshape({2, -1});
  const at::Tensor want_mean = 0.1 * per_channel.mean(1);
  const at::Tensor want_var = 0.9 + 0.1 * per_channel.var(1, /*unbiased=*/true);
  for (const auto& [name, t] : r.final_state) {
    if (name == "bn.running_mean") EXPECT_TRUE(at::allclose(t, want_mean, 1e-12, 1e-12)) << t;
    if (name == "bn.running_var") EXPECT_TRUE(at::allclose(t, want_var, 1e-12, 1e-12)) << t;
    if (name == "bn.num_batches_tracked") EXPECT_EQ(t.item<int64_t>(), 1);
  }
  // And it is NOT the statistic of the whole batch.
  const at::Tensor all = inputs.transpose(0, 1).reshape({2, -1});
  for (const auto& [name, t] : r.final_state) {
    if (name == "bn.running_mean") EXPECT_FALSE(at::allclose(t, 0.1 * all.mean(1), 1e-6, 1e-6));
  }
}

}  // namespace
}  // namespace ddpbench::modes::data_parallel
