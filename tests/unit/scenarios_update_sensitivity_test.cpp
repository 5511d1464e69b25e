// scenarios_update_sensitivity_test.cpp — Note [Updates of adaptive optimizers]: the closed form
// of |d update / d gradient| that the lockstep updates check gives Adam's and AdamW's elements is
// the derivative of the step libtorch takes, checked against central differences of real steps
// in float64 (first and third step, both kinds of weight decay, gradients from 1e-9 to 1: where
// Adam's eps dominates and where it does not); SGD, linear in its gradient, gets none.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>

#include "scenarios/optim/update_sensitivity.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::scenarios {
namespace {

// The central difference's step, relative to |g| + Adam's eps: its truncation error is about
// kSlope^2 relative, and the parameters start at 0 so that float64 resolves the updates' change.
constexpr double kSlope = 1e-3;

at::Tensor start_value() { return at::zeros({5}, at::kDouble); }

// Gradients of every magnitude the note speaks of, signed, different per step.
at::Tensor gradient_at(int64_t step) {
  const at::Tensor g = at::tensor({1e-9, -3e-8, 4e-7, -2e-3, 0.8}, at::kDouble);
  return step % 2 == 0 ? g : g.mul(-0.6).add(1e-9);
}

struct Stepped {
  at::Tensor update;       // the last step's parameter change
  at::Tensor sensitivity;  // update_sensitivity after it
};

// `steps` steps of `spec`'s optimizer on one parameter, the last one's gradient `last`.
Stepped train(const OptimizerSpec& spec, int64_t steps, const at::Tensor& last) {
  at::Tensor p = start_value().clone().requires_grad_(true);
  auto optimizer = make_optimizer(spec, {p});
  at::Tensor before;
  for (int64_t s = 0; s < steps; ++s) {
    p.mutable_grad() = s + 1 == steps ? last.clone() : gradient_at(s);
    before = p.detach().clone();
    optimizer->step();
  }
  return {p.detach() - before, update_sensitivity(*optimizer, p, last, before)};
}

void expect_derivative(const OptimizerSpec& spec, int64_t steps) {
  const at::Tensor g = gradient_at(steps - 1);
  const at::Tensor h = (g.abs() + 1e-8) * kSlope;
  const Stepped at_g = train(spec, steps, g);
  ASSERT_TRUE(at_g.sensitivity.defined());
  const at::Tensor numeric =
      ((train(spec, steps, g + h).update - train(spec, steps, g - h).update) / (2 * h)).abs();
  for (int64_t i = 0; i < g.numel(); ++i) {
    const double want = numeric[i].item<double>();
    const double got = at_g.sensitivity[i].item<double>();
    EXPECT_NEAR(got, want, 1e-4 * want + 1e-12)
        << "step " << steps << ", g = " << g[i].item<double>();
  }
}

OptimizerSpec adam_spec(OptimizerKind kind) {
  OptimizerSpec spec;
  spec.kind = kind;
  spec.lr = 1e-3;
  spec.beta1 = 0.9;
  spec.beta2 = 0.95;
  spec.weight_decay = 0.1;
  return spec;
}

TEST(UpdateSensitivity, IsTheDerivativeOfAdamWsStep) {
  expect_derivative(adam_spec(OptimizerKind::kAdamW), 1);
  expect_derivative(adam_spec(OptimizerKind::kAdamW), 3);
}

TEST(UpdateSensitivity, IsTheDerivativeOfAdamsStep) {
  OptimizerSpec spec = adam_spec(OptimizerKind::kAdam);
  spec.weight_decay = 0;
  expect_derivative(spec, 1);
  expect_derivative(spec, 3);
  // Adam adds weight_decay x the parameter it stepped from to the gradient.
  spec.weight_decay = 0.1;
  expect_derivative(spec, 1);
  expect_derivative(spec, 3);
}

TEST(UpdateSensitivity, GrowsWhereAdamsEpsDominatesAndSgdGetsNone) {
  const Stepped first = train(adam_spec(OptimizerKind::kAdamW), 1, gradient_at(0));
  // lr x eps / (|g| + eps)^2: ~1e4 per unit at |g| = 3e-8, ~1e-11 at |g| = 0.8.
  EXPECT_GT(first.sensitivity[1].item<double>(), 1e3);
  EXPECT_LT(first.sensitivity[4].item<double>(), 1e-10);
  OptimizerSpec sgd;
  sgd.kind = OptimizerKind::kSgd;
  sgd.lr = 0.1;
  sgd.momentum = 0.9;
  EXPECT_FALSE(train(sgd, 2, gradient_at(1)).sensitivity.defined());
}

}  // namespace
}  // namespace ddpbench::scenarios
