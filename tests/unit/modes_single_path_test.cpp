// modes_single_path_test.cpp — single-device mode against arithmetic done by hand: for
// linear_mse the gradient of mean((xW^T + b - y)^2) is closed-form, so one SGD step can be
// computed without autograd and compared in float64 to ~1e-12. Also: the global batch is the
// plan's, losses are recorded per step, and a diverging run is reported as a failure, not a number.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "errors.h"
#include "scenarios/registry.h"
#include "support/mode_training.h"

namespace ddpbench::modes {
namespace {

using testing::train_single;

struct Linear {
  at::Tensor w, b;
};

// One SGD step of lr on MSE, by hand: dL/dout = 2 (out - y) / numel.
Linear manual_step(const Linear& p, const at::Tensor& x, const at::Tensor& y, double lr) {
  const at::Tensor out = x.matmul(p.w.t()) + p.b;
  const at::Tensor g = 2.0 * (out - y) / static_cast<double>(out.numel());
  return {p.w - lr * g.t().matmul(x), p.b - lr * g.sum(0)};
}

TEST(SingleTrainer, LinearMseMatchesClosedFormSgdInFloat64) {
  const auto registry = scenarios::builtin_registry();
  const auto& spec = registry.get("linear_mse");
  auto instance = scenarios::instantiate(spec, {spec.seed, ""});
  auto params = instance.model.ptr()->named_parameters();
  Linear p{params["weight"].detach().to(at::kDouble), params["bias"].detach().to(at::kDouble)};
  const data::Batch all = data::collate(
      *instance.dataset,
      [] {
        std::vector<int64_t> v(20);
        for (int64_t i = 0; i < 20; ++i) v[static_cast<size_t>(i)] = i;
        return v;
      }(),
      0);
  const at::Tensor x = all.inputs.to(at::kDouble);
  const at::Tensor y = all.targets.to(at::kDouble);

  const int64_t steps = 3;
  const data::GlobalBatchPlan plan({20, 1, spec.shuffle, spec.seed, false}, 20);
  const TrainResult r = train_single(spec, instance, plan, steps, at::kDouble);
  for (int64_t s = 0; s < steps; ++s) p = manual_step(p, x, y, spec.optimizer.lr);

  ASSERT_EQ(r.losses.size(), 3u);
  EXPECT_GT(r.losses[0], r.losses[2]) << "SGD on MSE with lr 1 should still reduce the loss here";
  for (const auto& [name, t] : r.final_state) {
    const at::Tensor want = name == "weight" ? p.w : p.b;
    EXPECT_EQ(t.scalar_type(), at::kDouble);
    EXPECT_LT((t - want).abs().max().item<double>(), 1e-12) << name;
  }
}

TEST(SingleTrainer, DivergingLossIsAWorkerFailure) {
  const auto registry = scenarios::builtin_registry();
  scenarios::ScenarioSpec spec = registry.get("linear_mse");
  spec.optimizer.lr = 1e30;  // explodes to inf/nan within a few steps
  auto instance = scenarios::instantiate(spec, {spec.seed, ""});
  const data::GlobalBatchPlan plan({20, 1, false, 0, false}, 20);
  try {
    train_single(spec, instance, plan, 10, at::kFloat);
    FAIL() << "expected WorkerFailure";
  } catch (const WorkerFailure& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite loss"), std::string::npos) << e.what();
  }
}

TEST(SingleTrainer, ToyCnnLearnsAndCrossesEpochs) {
  const auto registry = scenarios::builtin_registry();
  scenarios::ScenarioSpec spec = registry.get("toy_cnn");
  spec.optimizer.lr = 0.01;
  auto instance = scenarios::instantiate(spec, {0, ""});
  // 64-sample epochs of 4 steps: 12 steps run three epochs, reshuffled each time.
  struct Small : data::Dataset {
    std::shared_ptr<const data::Dataset> inner;
    int64_t size() const override { return 64; }
    data::Example get(int64_t i, int64_t e) const override { return inner->get(i, e); }
    std::string describe() const override { return "first 64"; }
  };
  auto small = std::make_shared<Small>();
  small->inner = instance.dataset;
  instance.dataset = small;
  const data::GlobalBatchPlan plan({64, 1, true, 0, false}, 16);
  const TrainResult r = train_single(spec, instance, plan, 12, at::kFloat);
  ASSERT_EQ(r.losses.size(), 12u);
  const double first = (r.losses[0] + r.losses[1] + r.losses[2] + r.losses[3]) / 4;
  const double last = (r.losses[8] + r.losses[9] + r.losses[10] + r.losses[11]) / 4;
  EXPECT_LT(last, first) << "the model does not learn the synthetic classes";
}

}  // namespace
}  // namespace ddpbench::modes
