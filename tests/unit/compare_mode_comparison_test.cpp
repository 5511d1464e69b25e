// compare_mode_comparison_test.cpp — verdicts: identical traces pass, a perturbed gradient fails
// naming tensor and step, declared divergences become expected_divergence with their reason, a
// NaN never passes, fingerprints catch what full tensors catch, the first divergence is the
// earliest step, stage and tensor (not the worst), and lockstep judges every step's update and
// buffers.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>

#include "compare/mode_comparison.h"
#include "modes/common/gradient_record.h"
#include "reports/run/verdict.h"
#include "support/mode_traces.h"

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

using test::deep_copy;

ComparisonPolicy policy() {
  ComparisonPolicy p;
  p.state = {1.3e-6, 1e-5};
  p.gradient_tolerance = 2e-5;
  return p;
}

const reports::CheckRecord& find(const std::vector<reports::CheckRecord>& checks,
                                 const std::string& name) {
  for (const auto& c : checks) {
    if (reports::name_of(c.name) == name) return c;
  }
  throw std::runtime_error("no check " + name);
}

// "auto": ResNet-18 (11.2M elements) is recorded as fingerprints, tiny_resnet (0.3M) in full.
TEST(GradRecordChoice, LargeModelsAreFingerprintedUnderAuto) {
  EXPECT_EQ(modes::choose_grad_record(11'181'642), modes::GradRecordKind::kFingerprint);
  EXPECT_EQ(modes::choose_grad_record(modes::kFullGradientLimit), modes::GradRecordKind::kFull);
  EXPECT_EQ(modes::choose_grad_record(300'000), modes::GradRecordKind::kFull);
}

TEST(ModeComparison, IdenticalTracesPassEveryCheck) {
  const ModeTrace ref = trace(1);
  const auto judged = compare_modes(ref, deep_copy(ref), policy());
  ASSERT_EQ(judged.checks.size(), 4u);  // loss, gradients, parameters, buffers
  for (const auto& c : judged.checks)
    EXPECT_EQ(c.status, reports::CheckStatus::kPass)
        << reports::name_of(c.name) << ": " << reports::describe_counts(c);
  EXPECT_EQ(judged.first_divergence.stage, reports::Stage::kNone);
}

TEST(ModeComparison, PerturbedGradientFailsNamingTensorAndStep) {
  const ModeTrace ref = trace(2);
  ModeTrace got = deep_copy(ref);
  got.gradients[1][1].mul_(1.0 + 1e-3);
  const auto checks = compare_modes(ref, got, policy()).checks;
  const auto& g = find(checks, "gradients");
  EXPECT_EQ(g.status, reports::CheckStatus::kFail);
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
  const auto checks = compare_modes(ref, got, p).checks;
  const auto& b = find(checks, "buffers");
  EXPECT_EQ(b.status, reports::CheckStatus::kExpectedDivergence);
  EXPECT_NE(b.detail.find("local batch statistics"), std::string::npos);
  EXPECT_NEAR(b.max_abs_diff, 0.5, 1e-12);
  // The same difference on a tensor the rule does not cover is a failure.
  got.final_state[0].second.add_(0.5);
  const auto again = compare_modes(ref, got, p).checks;
  EXPECT_EQ(find(again, "parameters").status, reports::CheckStatus::kFail);
}

TEST(ModeComparison, NanNeverPasses) {
  const ModeTrace ref = trace(4);
  ModeTrace got = deep_copy(ref);
  got.losses[2] = std::numeric_limits<double>::quiet_NaN();
  got.final_state[0].second[0][0] = std::numeric_limits<float>::quiet_NaN();
  const auto checks = compare_modes(ref, got, policy()).checks;
  EXPECT_EQ(find(checks, "loss").status, reports::CheckStatus::kFail);
  EXPECT_EQ(find(checks, "parameters").status, reports::CheckStatus::kFail);
}

TEST(ModeComparison, FirstDivergenceIsTheEarliestStepNotTheWorst) {
  const ModeTrace ref = trace(6);
  ModeTrace got = deep_copy(ref);
  got.gradients[1][0].mul_(1.0 + 1e-4);  // fc.weight, step 1: small
  got.gradients[1][1].mul_(1.0 + 1e-4);  // fc.bias, step 1: computed first by backward
  got.gradients[2][0].mul_(1.0 + 1e-1);  // step 2: the worst
  got.final_state[0].second.add_(1.0);
  const auto judged = compare_modes(ref, got, policy());
  EXPECT_EQ(find(judged.checks, "gradients").step, 2);
  const reports::DivergenceRecord& d = judged.first_divergence;
  EXPECT_EQ(d.stage, reports::Stage::kGradients);
  EXPECT_EQ(d.step, 1);
  EXPECT_EQ(d.tensor, "fc.bias");
  EXPECT_NEAR(d.error, 1e-4, 2e-5);
  EXPECT_NE(d.measure.find("normalized error 2e-05"), std::string::npos) << d.measure;
}

TEST(ModeComparison, ALossDifferencePartsBeforeTheGradientsOfItsStep) {
  const ModeTrace ref = trace(7);
  ModeTrace got = deep_copy(ref);
  got.losses[1] += 1e-2;
  got.gradients[1][1].mul_(1.0 + 1e-2);
  const auto judged = compare_modes(ref, got, policy());
  EXPECT_EQ(judged.first_divergence.stage, reports::Stage::kLoss);
  EXPECT_EQ(judged.first_divergence.step, 1);
}

TEST(ModeComparison, FinalStateDivergesAfterEveryStep) {
  const ModeTrace ref = trace(8);
  ModeTrace got = deep_copy(ref);
  got.final_state[2].second.add_(1.0);
  const auto judged = compare_modes(ref, got, policy());
  EXPECT_EQ(judged.first_divergence.stage, reports::Stage::kBuffers);
  EXPECT_EQ(judged.first_divergence.step, -1);
  EXPECT_EQ(judged.first_divergence.tensor, "bn.running_mean");
}

ModeTrace lockstep_trace(const ModeTrace& ref) {
  ModeTrace got = deep_copy(ref);
  got.comparison = "lockstep";
  got.final_state.clear();
  for (int64_t s = 0; s < 3; ++s) {
    got.state_diffs.push_back({s, "fc.weight", reports::Stage::kUpdates, 1e-7, 1e-7, 0});
    got.state_diffs.push_back({s, "fc.bias", reports::Stage::kUpdates, 1e-7, 1e-7, 0});
    got.state_diffs.push_back({s, "bn.running_mean", reports::Stage::kBuffers, 0.0, 0.0, 0});
  }
  return got;
}

TEST(ModeComparison, LockstepJudgesEveryStepsUpdateAndBuffers) {
  const ModeTrace ref = trace(9);
  ModeTrace got = lockstep_trace(ref);
  auto judged = compare_modes(ref, got, policy());
  EXPECT_EQ(find(judged.checks, "updates").status, reports::CheckStatus::kPass);
  EXPECT_EQ(find(judged.checks, "buffers").status, reports::CheckStatus::kPass);
  EXPECT_THROW(find(judged.checks, "parameters"), std::runtime_error);

  got.state_diffs[4].error = 3e-5;    // fc.bias update at step 1, beyond the gradient tolerance
  got.state_diffs[8].violations = 1;  // running mean after step 2
  judged = compare_modes(ref, got, policy());
  EXPECT_EQ(find(judged.checks, "updates").status, reports::CheckStatus::kFail);
  EXPECT_EQ(find(judged.checks, "buffers").status, reports::CheckStatus::kFail);
  EXPECT_EQ(judged.first_divergence.stage, reports::Stage::kUpdates);
  EXPECT_EQ(judged.first_divergence.step, 1);
  EXPECT_EQ(judged.first_divergence.tensor, "fc.bias");
}

TEST(ModeComparison, LockstepWithNothingRecordedFails) {
  const ModeTrace ref = trace(10);
  ModeTrace got = lockstep_trace(ref);
  got.state_diffs.clear();
  EXPECT_EQ(find(compare_modes(ref, got, policy()).checks, "updates").status,
            reports::CheckStatus::kFail);
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

TEST(ModeComparison, UpdateErrorIgnoresTheRoundingOfTheParameterAdd) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(11);
  const at::Tensor before = at::randn({1000}, gen);
  const at::Tensor update = 1e-5 * at::randn({1000}, gen);
  const at::Tensor ref = before + update;
  // The same update, one ulp apart after the add: rounding, not a different update.
  const at::Tensor got = at::nextafter(ref, ref + 1);
  EXPECT_GT(normalized_gradient_error(got - before, ref - before, false), 1e-3);
  EXPECT_EQ(normalized_update_error(got, ref, before), 0.0);
  // An update 1% larger is 1% of the update, however large the parameters are.
  const at::Tensor bigger = before + update * 1.01;
  EXPECT_NEAR(normalized_update_error(bigger, ref, before), 1e-2, 2e-3);
  EXPECT_TRUE(std::isinf(normalized_update_error(ref * NAN, ref, before)));
}

// Per Note [Gradients at rounding level], a bias whose gradient cancelled to rounding noise (values
// near eps x the step's largest gradient) passes with other noise, while a 1e-4 error on a real
// gradient, and a "noise" tensor that came out large, still fail.
TEST(ModeComparison, AGradientAtRoundingLevelIsJudgedAgainstTheStepsLevel) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(12);
  ModeTrace ref;
  ref.losses = {1.0};
  ref.param_names = {"conv.weight", "bn.bias"};
  const at::Tensor weight = at::randn({64}, gen);        // largest entry ~2.5
  const at::Tensor noise = 1e-7 * at::randn({16}, gen);  // ~0.4 eps of it
  ref.gradients = {{weight, noise}};
  ModeTrace got = deep_copy(ref);
  got.gradients[0][1] = 1e-7 * at::randn({16}, gen);  // other noise: O(1) of its own size
  ASSERT_GT(normalized_gradient_error(got.gradients[0][1], noise, false), 0.5);
  EXPECT_EQ(find(compare_modes(ref, got, policy()).checks, "gradients").status,
            reports::CheckStatus::kPass);

  ModeTrace fault = deep_copy(got);
  fault.gradients[0][0] = weight * (1 + 1e-4);
  EXPECT_EQ(find(compare_modes(ref, fault, policy()).checks, "gradients").status,
            reports::CheckStatus::kFail);

  ModeTrace large = deep_copy(got);
  large.gradients[0][1] = noise + 1e-3;  // far above the rounding level
  EXPECT_EQ(find(compare_modes(ref, large, policy()).checks, "gradients").status,
            reports::CheckStatus::kFail);
}

TEST(ModeComparison, RankAgreementCheck) {
  EXPECT_EQ(rank_agreement_check(5, -1, -1, "").status, reports::CheckStatus::kPass);
  const auto c = rank_agreement_check(5, 4, 2, "conv1.weight");
  EXPECT_EQ(c.status, reports::CheckStatus::kFail);
  EXPECT_NE(c.detail.find("rank 2"), std::string::npos);
}

// --amp fp16: the scale and skipped steps are compared exactly, with the reference and across
// ranks.
TEST(ModeComparison, LossScaleCheckFailsOnAnotherScaleOrSkip) {
  ModeTrace ref = trace(1);
  ref.loss_scales = {65536, 32768, 32768};
  ref.skipped = {true, false, false};
  ModeTrace got = deep_copy(ref);
  const auto pass = compare_modes(ref, got, policy());
  ASSERT_EQ(pass.checks.back().name, reports::Stage::kLossScale);
  EXPECT_EQ(pass.checks.back().status, reports::CheckStatus::kPass);
  EXPECT_NE(pass.checks.back().detail.find("1 of 3 steps skipped"), std::string::npos);

  got.skipped = {false, false, false};  // the overflow went unnoticed at step 0
  const auto fail = compare_modes(ref, got, policy());
  EXPECT_EQ(fail.checks.back().status, reports::CheckStatus::kFail);
  EXPECT_EQ(fail.checks.back().step, 0);
  EXPECT_EQ(fail.first_divergence.stage, reports::Stage::kLossScale);

  got = deep_copy(ref);
  got.loss_scales[2] = 65536;
  const auto scale = loss_scale_check(ref, got);
  EXPECT_EQ(scale.status, reports::CheckStatus::kFail);
  EXPECT_EQ(scale.step, 2);
  EXPECT_NE(scale.detail.find("scale 65536 against the reference's scale 32768"), std::string::npos)
      << scale.detail;

  EXPECT_EQ(scale_agreement_check(3, -1, -1, 0, 0).status, reports::CheckStatus::kPass);
  const auto ranks = scale_agreement_check(3, 1, 2, 131072, 65536);
  EXPECT_EQ(ranks.status, reports::CheckStatus::kFail);
  EXPECT_NE(ranks.detail.find("rank 2 held GradScaler scale 131072 after step 1"),
            std::string::npos)
      << ranks.detail;
}

}  // namespace
}  // namespace ddpbench::compare
