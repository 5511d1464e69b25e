// scenarios_text_recipe_test.cpp — the recipe pieces imdb_gcnn added: libtorch's Adam pinned to
// torch.optim.Adam's formula (so a libtorch release that changed it fails here), Adam's and SGD's
// per-parameter state through TrainingState (capture, load into a fresh optimizer, identical next
// steps), clip_grad_norm_'s arithmetic, BCE on one-hot targets, the gated CNN on sequences
// shorter than its receptive field, and clipping applied by the step loop identically in single
// and dp (float64) on the scenario itself, with the gradients recorded before clipping.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "modes/common/training_state.h"
#include "scenarios/models/gated_cnn_net.h"
#include "scenarios/optim/clip_grad_norm.h"
#include "scenarios/registry.h"
#include "scenarios/training_recipe.h"
#include "support/mode_training.h"

namespace ddpbench::scenarios {
namespace {

// One parameter whose gradient is set by hand each step.
struct Holder : torch::nn::Module {
  Holder() { w = register_parameter("w", at::tensor({0.5, -1.0, 2.0}, at::kDouble)); }
  at::Tensor w;
};

const std::vector<at::Tensor> kGrads = {at::tensor({0.1, -0.2, 0.3}, at::kDouble),
                                        at::tensor({-0.05, 0.4, 1e-9}, at::kDouble),
                                        at::tensor({0.2, 0.0, -0.7}, at::kDouble)};

void step_with(torch::optim::Optimizer& opt, Holder& h, const at::Tensor& grad) {
  h.w.mutable_grad() = grad.clone();
  opt.step();
}

TEST(Adam, MatchesTorchOptimAdamsFormula) {
  OptimizerSpec spec;
  spec.kind = OptimizerKind::kAdam;
  spec.lr = 0.01;
  spec.weight_decay = 0.1;
  Holder h;
  auto opt = make_optimizer(spec, h.parameters());
  // torch.optim.Adam (amsgrad off): g += wd * p; m, v moving averages; bias-corrected step.
  at::Tensor p = h.w.detach().clone();
  at::Tensor m = at::zeros_like(p);
  at::Tensor v = at::zeros_like(p);
  for (size_t t = 1; t <= kGrads.size(); ++t) {
    const at::Tensor g = kGrads[t - 1] + spec.weight_decay * p;
    m = spec.beta1 * m + (1 - spec.beta1) * g;
    v = spec.beta2 * v + (1 - spec.beta2) * g * g;
    const double bc1 = 1 - std::pow(spec.beta1, static_cast<double>(t));
    const double bc2 = 1 - std::pow(spec.beta2, static_cast<double>(t));
    p = p - spec.lr * (m / bc1) / (v.sqrt() / std::sqrt(bc2) + spec.eps);
    step_with(*opt, h, kGrads[t - 1]);
    EXPECT_LT((h.w.detach() - p).abs().max().item<double>(), 1e-15) << "step " << t;
  }
  EXPECT_EQ(describe_optimizer(spec),
            "Adam(lr=0.01, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.1)");
}

// Steps `a` once, moves its state into a fresh model + optimizer `b`, steps both with the same
// gradient: the same parameters, bit for bit, only if every state tensor came across.
void expect_state_round_trip(const OptimizerSpec& spec, const std::vector<std::string>& names) {
  Holder a;
  Holder b;
  auto opt_a = make_optimizer(spec, a.parameters());
  auto opt_b = make_optimizer(spec, b.parameters());
  const modes::TrainingState before = modes::capture_training_state(a, *opt_a);
  ASSERT_EQ(before.optimizer_state.size(), 1u);
  EXPECT_TRUE(before.optimizer_state[0].empty()) << "no state before the first step";
  step_with(*opt_a, a, kGrads[0]);
  step_with(*opt_a, a, kGrads[1]);
  const modes::TrainingState s = modes::capture_training_state(a, *opt_a);
  std::vector<std::string> got;
  for (const auto& [name, t] : s.optimizer_state[0]) got.push_back(name);
  EXPECT_EQ(got, names);
  modes::load_training_state(b, *opt_b, s);
  step_with(*opt_a, a, kGrads[2]);
  step_with(*opt_b, b, kGrads[2]);
  EXPECT_TRUE(at::equal(a.w, b.w));
  // The state is a copy: stepping `a` did not move what was captured.
  const modes::TrainingState again = modes::capture_training_state(a, *opt_a);
  EXPECT_FALSE(
      at::equal(again.optimizer_state[0].begin()->second, s.optimizer_state[0].begin()->second));
  // Loading the empty state clears it: the next step is a first step again.
  Holder c;
  auto opt_c = make_optimizer(spec, c.parameters());
  step_with(*opt_c, c, kGrads[0]);
  modes::load_training_state(c, *opt_c, before);
  step_with(*opt_c, c, kGrads[0]);
  Holder fresh;
  auto opt_fresh = make_optimizer(spec, fresh.parameters());
  step_with(*opt_fresh, fresh, kGrads[0]);
  EXPECT_TRUE(at::equal(c.w, fresh.w));
}

TEST(TrainingState, AdamStateRoundTrips) {
  OptimizerSpec spec;
  spec.kind = OptimizerKind::kAdam;
  spec.lr = 0.01;
  expect_state_round_trip(spec, {"exp_avg", "exp_avg_sq", "step"});
  Holder h;
  auto opt = make_optimizer(spec, h.parameters());
  step_with(*opt, h, kGrads[0]);
  step_with(*opt, h, kGrads[1]);
  const auto s = modes::capture_training_state(h, *opt);
  EXPECT_EQ(s.optimizer_state[0].at("step").dim(), 0);
  EXPECT_EQ(s.optimizer_state[0].at("step").item<double>(), 2.0);
}

TEST(TrainingState, SgdMomentumRoundTrips) {
  OptimizerSpec spec;
  spec.lr = 0.1;
  spec.momentum = 0.9;
  expect_state_round_trip(spec, {"momentum_buffer"});
}

TEST(ClipGradNorm, ScalesEveryGradientByMaxNormOverTheTotalNorm) {
  auto a = at::zeros({2}, at::kDouble).requires_grad_();
  auto b = at::zeros({1}, at::kDouble).requires_grad_();
  auto none = at::zeros({1}, at::kDouble).requires_grad_();  // no gradient: skipped
  a.mutable_grad() = at::tensor({3.0, 4.0}, at::kDouble);
  b.mutable_grad() = at::tensor({12.0}, at::kDouble);
  const at::Tensor total = clip_grad_norm({a, b, none}, 1.3);
  EXPECT_DOUBLE_EQ(total.item<double>(), 13.0);
  const double coef = 1.3 / (13.0 + 1e-6);
  EXPECT_NEAR(a.grad()[1].item<double>(), 4.0 * coef, 1e-15);
  EXPECT_NEAR(b.grad()[0].item<double>(), 12.0 * coef, 1e-15);
  EXPECT_FALSE(none.grad().defined());
  // Below the threshold nothing changes (the coefficient is clamped to 1).
  clip_grad_norm({a, b}, 100.0);
  EXPECT_NEAR(b.grad()[0].item<double>(), 12.0 * coef, 1e-15);
}

TEST(BceOneHot, IsTheMeanBinaryCrossEntropyOfSigmoidAgainstOneHot) {
  const at::Tensor logits = at::tensor({0.3, -1.2, 2.0, 0.5, -0.7, 0.1}, at::kDouble).view({3, 2});
  const at::Tensor labels = at::tensor({1, 0, 1}, at::kLong);
  const at::Tensor p = logits.sigmoid();
  const at::Tensor y = at::tensor({0.0, 1.0, 1.0, 0.0, 0.0, 1.0}, at::kDouble).view({3, 2});
  const at::Tensor want = -(y * p.log() + (1 - y) * (1 - p).log()).mean();
  EXPECT_NEAR(compute_loss(LossKind::kBceOneHot, logits, labels).item<double>(),
              want.item<double>(), 1e-15);
  EXPECT_TRUE(loss_is_sample_mean(LossKind::kBceOneHot));
}

double max_state_diff(const modes::TrainResult& a, const modes::TrainResult& b) {
  double worst = 0;
  for (size_t i = 0; i < a.final_state.size(); ++i) {
    worst = std::max(
        worst, (a.final_state[i].second - b.final_state[i].second).abs().max().item<double>());
  }
  return worst;
}

TEST(GatedCnn, SequencesShorterThanTheReceptiveFieldArePaddedWithIdZero) {
  torch::manual_seed(0);
  models::GatedCnn net;
  const at::Tensor short_batch =
      at::tensor({5, 9, 14999, 1, 0, 7, 3, 3, 2, 8}, at::kLong).view({2, 5});
  const at::Tensor out = net->forward(short_batch);
  ASSERT_EQ(out.sizes(), (at::IntArrayRef{2, 2}));
  const at::Tensor padded =
      at::constant_pad_nd(short_batch, {0, models::GatedCnnImpl::kMinLength - 5}, 0);
  EXPECT_TRUE(at::equal(out, net->forward(padded)));
  EXPECT_EQ(models::GatedCnnImpl::kMinLength, 113);
  // One token fewer than the minimum would leave block 2 without a window, were it not padded.
  EXPECT_EQ(net->forward(at::zeros({1, 112}, at::kLong)).sizes(), (at::IntArrayRef{1, 2}));
}

TEST(ImdbGcnn, ClippingActsIdenticallyInSingleAndDataParallel) {
  const auto registry = builtin_registry();
  const ScenarioSpec& spec = registry.get("imdb_gcnn");
  ASSERT_TRUE(spec.clip_grad_norm.has_value());
  ScenarioSpec unclipped = spec;
  unclipped.clip_grad_norm.reset();
  auto train = [&](const ScenarioSpec& s, bool dp) {
    auto instance = instantiate(s, {0, ""});
    const data::GlobalBatchPlan plan({instance.dataset->size(), 2, true, 0, false}, 8);
    return dp ? testing::train_data_parallel(s, instance, plan, 3, at::kDouble)
              : testing::train_single(s, instance, plan, 3, at::kDouble);
  };
  const auto single = train(spec, false);
  const auto dp = train(spec, true);
  const auto single_unclipped = train(unclipped, false);
  EXPECT_LT(max_state_diff(single, dp), 1e-13);
  EXPECT_GT(max_state_diff(single, single_unclipped), 1e-6) << "clipping must have acted";
  // Step 0 starts from the same state: the recorded (pre-clipping) gradients are the same.
  for (size_t i = 0; i < single.gradients[0].size(); ++i) {
    EXPECT_TRUE(at::equal(single.gradients[0][i], single_unclipped.gradients[0][i])) << i;
  }
  double norm_sq = 0;
  for (const auto& g : single.gradients[0]) norm_sq += g.pow(2).sum().item<double>();
  EXPECT_GT(std::sqrt(norm_sq), *spec.clip_grad_norm) << "the test needs a norm to clip";
}

}  // namespace
}  // namespace ddpbench::scenarios
