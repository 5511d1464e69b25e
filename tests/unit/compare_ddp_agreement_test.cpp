// compare_ddp_agreement_test.cpp — the zero mode's check against ddp (compare/ddp_agreement.h):
// identical traces pass bit for bit; one ulp in one gradient fails bit for bit, naming its tensor
// and step, and passes the normalized rule; a missing tensor, a NaN loss or a gradient present on
// one side only fail under either rule; the status is always the verdict function's.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "compare/ddp_agreement.h"
#include "reports/run/verdict.h"
#include "support/mode_traces.h"

namespace ddpbench::compare {
namespace {

ModeTrace trace() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  ModeTrace t;
  t.losses = {2.0, 1.5, 1.25};
  t.param_names = {"fc.weight", "fc.bias"};
  for (int s = 0; s < 3; ++s) {
    t.gradients.push_back({at::randn({4, 3}, gen, at::kFloat), at::randn({4}, gen, at::kFloat)});
  }
  t.final_state = {{"fc.weight", at::randn({4, 3}, gen, at::kFloat)},
                   {"fc.bias", at::randn({4}, gen, at::kFloat)},
                   {"bn.running_mean", at::randn({4}, gen, at::kFloat)}};
  return t;
}

using test::deep_copy;

AgreementRule bitwise() { return {true, 2e-5, false, "bit for bit"}; }
AgreementRule normalized() { return {false, 2e-5, false, "normalized"}; }

reports::CheckRecord only(const ModeComparison& m) {
  EXPECT_EQ(m.checks.size(), 1U);
  EXPECT_EQ(m.checks.front().name, reports::Stage::kMatchesDdp);
  EXPECT_EQ(m.checks.front().status, reports::check_status(m.checks.front(), {}));
  return m.checks.front();
}

TEST(DdpAgreement, IdenticalTracesPassBitForBit) {
  const ModeTrace ddp = trace();
  const ModeComparison m = ddp_agreement(ddp, deep_copy(ddp), bitwise());
  const reports::CheckRecord c = only(m);
  EXPECT_EQ(c.status, reports::CheckStatus::kPass);
  EXPECT_EQ(c.measure, reports::Measure::kExact);
  EXPECT_EQ(c.items, 3 + 3 * 2 + 3);  // losses, gradients, final state
  EXPECT_EQ(c.detail, "bit for bit");
  EXPECT_EQ(m.first_divergence.stage, reports::Stage::kNone);
}

TEST(DdpAgreement, OneUlpFailsBitForBitAndPassesTheNormalizedRule) {
  const ModeTrace ddp = trace();
  ModeTrace zero = deep_copy(ddp);
  at::Tensor g = zero.gradients[1][1];
  g[2] = std::nextafter(g[2].item<float>(), INFINITY);
  const ModeComparison exact = ddp_agreement(ddp, zero, bitwise());
  const reports::CheckRecord c = only(exact);
  EXPECT_EQ(c.status, reports::CheckStatus::kFail);
  EXPECT_EQ(c.outside, 1);
  EXPECT_EQ(c.error, 1.0);
  EXPECT_EQ(c.tensor, "fc.bias");
  EXPECT_EQ(c.step, 1);
  EXPECT_GT(c.max_abs_diff, 0.0);
  EXPECT_EQ(exact.first_divergence.stage, reports::Stage::kMatchesDdp);
  EXPECT_EQ(exact.first_divergence.step, 1);
  EXPECT_EQ(exact.first_divergence.tensor, "fc.bias");
  const reports::CheckRecord n = only(ddp_agreement(ddp, zero, normalized()));
  EXPECT_EQ(n.status, reports::CheckStatus::kPass);
  EXPECT_EQ(n.measure, reports::Measure::kNormalized);
  EXPECT_GT(n.error, 0.0);
  EXPECT_LE(n.error, 2e-5);
}

TEST(DdpAgreement, ABigDifferenceFailsTheNormalizedRule) {
  const ModeTrace ddp = trace();
  ModeTrace zero = deep_copy(ddp);
  zero.final_state[0].second.mul_(1.001);
  const reports::CheckRecord c = only(ddp_agreement(ddp, zero, normalized()));
  EXPECT_EQ(c.status, reports::CheckStatus::kFail);
  EXPECT_EQ(c.tensor, "fc.weight");
  EXPECT_EQ(c.step, -1);
}

TEST(DdpAgreement, MissingOrNaNNeverPasses) {
  const ModeTrace ddp = trace();
  for (const AgreementRule& rule : {bitwise(), normalized()}) {
    ModeTrace missing = deep_copy(ddp);
    missing.final_state.pop_back();  // zero left out a buffer
    EXPECT_EQ(only(ddp_agreement(ddp, missing, rule)).status, reports::CheckStatus::kFail);
    ModeTrace nan = deep_copy(ddp);
    nan.losses[2] = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(only(ddp_agreement(ddp, nan, rule)).status, reports::CheckStatus::kFail);
    ModeTrace none = deep_copy(ddp);
    none.gradients[0][0] = at::Tensor();  // None in zero, a gradient in ddp
    EXPECT_EQ(only(ddp_agreement(ddp, none, rule)).status, reports::CheckStatus::kFail);
    ModeTrace shorter = deep_copy(ddp);
    shorter.losses.pop_back();
    EXPECT_EQ(only(ddp_agreement(ddp, shorter, rule)).status, reports::CheckStatus::kFail);
  }
}

TEST(DdpAgreement, NoneOnBothSidesIsTheSame) {
  ModeTrace ddp = trace();
  ddp.gradients[0][0] = at::Tensor();  // a parameter no rank used, in both
  ModeTrace zero = deep_copy(ddp);
  EXPECT_EQ(only(ddp_agreement(ddp, zero, bitwise())).status, reports::CheckStatus::kPass);
}

}  // namespace
}  // namespace ddpbench::compare
