// compare_mode_comparison_test.cpp — verdicts: identical traces pass, a perturbed gradient fails
// naming tensor and step, declared divergences become expected_divergence with their reason, a
// NaN never passes, and fingerprints catch what full tensors catch.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "compare/mode_comparison.h"
#include "modes/common/gradient_record.h"

namespace ddpbench::compare {
namespace {

ModeTrace trace(uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  ModeTrace t;
  t.losses = {2.0, 1.5, 1.25};
  t.param_names = {"fc.weight", "fc.bias"};
  for (int s = 0; s < 3; ++s) t.gradients.push_back({at::randn({4, 3}, gen), at::randn({4}, gen)});
  t.final_state = {{"fc.weight", at::randn({4, 3}, gen)},
                   {"fc.bias", at::randn({4}, gen)},
                   {"bn.running_mean", at::randn({4}, gen)}};
  return t;
}

ModeTrace deep_copy(const ModeTrace& t) {
  ModeTrace c = t;
  for (auto& step : c.gradients) {
    for (auto& g : step) g = g.clone();
  }
  for (auto& [n, v] : c.final_state) v = v.clone();
  return c;
}

ComparisonPolicy policy() {
  ComparisonPolicy p;
  p.state = {1.3e-6, 1e-5};
  p.gradient_tolerance = 2e-5;
  return p;
}

const reports::CheckRecord& find(const std::vector<reports::CheckRecord>& checks,
                                 const std::string& name) {
  for (const auto& c : checks) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no check " + name);
}

TEST(ModeComparison, IdenticalTracesPassEveryCheck) {
  const ModeTrace ref = trace(1);
  const auto checks = compare_modes(ref, deep_copy(ref), policy());
  ASSERT_EQ(checks.size(), 4u);  // loss, gradients, parameters, buffers
  for (const auto& c : checks) EXPECT_EQ(c.status, "pass") << c.name << ": " << c.detail;
}

TEST(ModeComparison, PerturbedGradientFailsNamingTensorAndStep) {
  const ModeTrace ref = trace(2);
  ModeTrace got = deep_copy(ref);
  got.gradients[1][1].mul_(1.0 + 1e-3);
  const auto checks = compare_modes(ref, got, policy());
  const auto& g = find(checks, "gradients");
  EXPECT_EQ(g.status, "fail");
  EXPECT_EQ(g.tensor, "fc.bias");
  EXPECT_EQ(g.step, 1);
  EXPECT_NEAR(g.max_abs_diff, 1e-3, 2e-4);
}

TEST(ModeComparison, DeclaredDivergenceIsLabelledWithItsReasonAndSize) {
  const ModeTrace ref = trace(3);
  ModeTrace got = deep_copy(ref);
  got.final_state[2].second.add_(0.5);
  ComparisonPolicy p = policy();
  p.divergences = {{"running_(mean|var)$", "local batch statistics"}};
  const auto checks = compare_modes(ref, got, p);
  const auto& b = find(checks, "buffers");
  EXPECT_EQ(b.status, "expected_divergence");
  EXPECT_NE(b.detail.find("local batch statistics"), std::string::npos);
  EXPECT_NEAR(b.max_abs_diff, 0.5, 1e-12);
  // The same difference on a tensor the rule does not cover is a failure.
  got.final_state[0].second.add_(0.5);
  const auto again = compare_modes(ref, got, p);
  EXPECT_EQ(find(again, "parameters").status, "fail");
}

TEST(ModeComparison, NanNeverPasses) {
  const ModeTrace ref = trace(4);
  ModeTrace got = deep_copy(ref);
  got.losses[2] = std::numeric_limits<double>::quiet_NaN();
  got.final_state[0].second[0][0] = std::numeric_limits<float>::quiet_NaN();
  const auto checks = compare_modes(ref, got, policy());
  EXPECT_EQ(find(checks, "loss").status, "fail");
  EXPECT_EQ(find(checks, "parameters").status, "fail");
}

TEST(ModeComparison, FingerprintsDetectARelativeGradientError) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(5);
  const at::Tensor g = at::randn({1000}, gen);
  const at::Tensor ref = modes::fingerprint(g);
  EXPECT_EQ(normalized_gradient_error(modes::fingerprint(g.clone()), ref, true), 0.0);
  const double err = normalized_gradient_error(modes::fingerprint(g * (1 + 5e-4)), ref, true);
  EXPECT_GT(err, 2e-5);
  EXPECT_NEAR(err, 5e-4, 1e-4);
}

TEST(ModeComparison, RankAgreementCheck) {
  EXPECT_EQ(rank_agreement_check(-1, -1, "").status, "pass");
  const auto c = rank_agreement_check(4, 2, "conv1.weight");
  EXPECT_EQ(c.status, "fail");
  EXPECT_NE(c.detail.find("rank 2"), std::string::npos);
}

}  // namespace
}  // namespace ddpbench::compare
