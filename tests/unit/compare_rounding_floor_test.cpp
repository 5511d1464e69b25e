// compare_rounding_floor_test.cpp — Note [Rounding floor measured on the model] on hand-made
// traces: an item beyond its fixed limit passes within 4 x the floor measured for it and fails
// beyond it (so the floor cannot hide a fault larger than its multiple), a floor above the
// precision's cap leaves the item not comparable instead of passing it, a check keeps counting and
// naming what it let through, final parameters are judged by what moved them, and the verdict
// recomputes all of it from the numbers.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "compare/ddp_agreement.h"
#include "compare/mode_comparison.h"
#include "compare/rounding_floor.h"
#include "reports/run/verdict.h"
#include "support/mode_traces.h"

namespace ddpbench::compare {
namespace {

constexpr double kLimit = 2e-5;
const double kCap = std::sqrt(0x1p-23);  // float32's

ModeTrace two_steps() {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(7);
  ModeTrace t;
  t.losses = {2.0, 1.5};
  t.param_names = {"conv.weight", "bn.weight"};
  for (int s = 0; s < 2; ++s) {
    t.gradients.push_back(
        {at::randn({8, 3}, gen).to(at::kDouble) + 2.0, at::randn({4}, gen).to(at::kDouble) + 2.0});
  }
  t.final_state = {{"conv.weight", at::randn({8, 3}, gen).to(at::kDouble)},
                   {"bn.weight", at::ones({4}, at::kDouble)}};
  return t;
}

ComparisonPolicy floor_policy() {
  ComparisonPolicy p;
  p.state = {1.3e-6, 1e-5};
  p.gradient_tolerance = kLimit;
  return p;
}

const reports::CheckRecord& find(const ModeComparison& m, reports::Stage name) {
  for (const auto& c : m.checks) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no such check");
}

// The twin's gradient of bn.weight at step 1 differs from the reference's by `floor` of its
// largest entry: that tensor's measured floor.
MeasuredFloors floors_of(const ModeTrace& ref, double floor) {
  MeasuredFloors f;
  f.cap = kCap;
  const at::Tensor& g = ref.gradients[1][1];
  at::Tensor diff = at::zeros_like(g);
  diff[0] = floor * g.abs().max().item<double>();
  f.set_gradient_diffs(1, {at::Tensor(), diff});
  return f;
}

// bn.weight's gradient at step 1 moved by `relative` of its largest entry.
ModeTrace moved(const ModeTrace& ref, double relative) {
  ModeTrace got = test::deep_copy(ref);
  at::Tensor& g = got.gradients[1][1];
  g[2] += relative * ref.gradients[1][1].abs().max().item<double>();
  return got;
}

TEST(RoundingFloor, FloorLimitRaisesOnlyBetweenTheLimitAndTheCap) {
  EXPECT_EQ(floor_limit(0.0, kLimit, kCap), kLimit);           // none measured
  EXPECT_EQ(floor_limit(kLimit / 10, kLimit, kCap), kLimit);   // within the fixed limit
  EXPECT_DOUBLE_EQ(floor_limit(1e-5, kLimit, kCap), 4e-5);     // 4 x the floor
  EXPECT_EQ(floor_limit(1e-3, kLimit, kCap), kUnresolved);     // beyond what float32 resolves
  EXPECT_EQ(floor_limit(std::nan(""), kLimit, kCap), kLimit);  // a twin that broke: no floor
}

TEST(RoundingFloor, AnItemWithinFourTimesItsFloorPassesAndIsCounted) {
  const ModeTrace ref = two_steps();
  const ModeTrace got = moved(ref, 7e-5);  // 3.5 x the fixed limit
  ASSERT_EQ(find(compare_modes(ref, got, floor_policy()), reports::Stage::kGradients).status,
            reports::CheckStatus::kFail);
  const MeasuredFloors f = floors_of(ref, 2e-5);  // allows 8e-5
  const ModeComparison m = compare_modes(ref, got, floor_policy(), &f);
  const reports::CheckRecord& g = find(m, reports::Stage::kGradients);
  EXPECT_EQ(g.status, reports::CheckStatus::kPass) << reports::describe_counts(g);
  EXPECT_EQ(g.floored, 1);
  EXPECT_EQ(g.floor_tensor, "bn.weight");
  EXPECT_EQ(g.floor_step, 1);
  EXPECT_NEAR(g.floor_error, 7e-5, 1e-9);
  EXPECT_NEAR(g.floor_limit, 8e-5, 1e-12);
  EXPECT_LE(g.error, kLimit);
  EXPECT_EQ(m.first_divergence.stage, reports::Stage::kNone);
  EXPECT_NE(reports::describe_counts(g).find("1 of them only within 4 x the rounding floor"),
            std::string::npos)
      << reports::describe_counts(g);
  EXPECT_EQ(reports::check_inconsistency(g, "g"), "");
}

TEST(RoundingFloor, AFaultBeyondFourTimesTheFloorStillFails) {
  const ModeTrace ref = two_steps();
  const MeasuredFloors f = floors_of(ref, 2e-5);
  const ModeComparison m = compare_modes(ref, moved(ref, 9e-5), floor_policy(), &f);
  const reports::CheckRecord& g = find(m, reports::Stage::kGradients);
  EXPECT_EQ(g.status, reports::CheckStatus::kFail);
  EXPECT_EQ(g.floored, 0);
  EXPECT_EQ(m.first_divergence.tensor, "bn.weight");
  // The floor of one tensor says nothing of another: a fault on conv.weight is held to the limit.
  ModeTrace other = test::deep_copy(ref);
  other.gradients[1][0] *= 1 + 5e-5;
  EXPECT_EQ(find(compare_modes(ref, other, floor_policy(), &f), reports::Stage::kGradients).status,
            reports::CheckStatus::kFail);
}

TEST(RoundingFloor, AFloorBeyondThePrecisionLeavesTheItemUnjudged) {
  const ModeTrace ref = two_steps();
  const MeasuredFloors f = floors_of(ref, 1e-3);  // above sqrt(eps32) = 3.45e-4
  const ModeComparison m = compare_modes(ref, moved(ref, 7e-5), floor_policy(), &f);
  const reports::CheckRecord& g = find(m, reports::Stage::kGradients);
  EXPECT_EQ(g.status, reports::CheckStatus::kPass);
  EXPECT_EQ(g.incomparable, 1);
  EXPECT_EQ(g.items, 3);  // 4 compared, one of them not
  EXPECT_EQ(g.incomparable_tensor, "bn.weight");
  EXPECT_EQ(g.incomparable_step, 1);
  EXPECT_NE(reports::describe_counts(g).find("1 more beyond it not comparable"), std::string::npos)
      << reports::describe_counts(g);
  // A non-finite difference is a failure whatever the floor says.
  ModeTrace nan = test::deep_copy(ref);
  nan.gradients[1][1][0] = std::nan("");
  EXPECT_EQ(find(compare_modes(ref, nan, floor_policy(), &f), reports::Stage::kGradients).status,
            reports::CheckStatus::kFail);
}

// (Note [Parted trajectories]) From the step a twin's trajectory left the reference's, an item
// beyond its fixed limit is not comparable whatever its own tensor's floor (a fault there too: the
// price, named in the report); items within their limits and earlier steps are judged as before,
// and the final state, reached after the parting, is not comparable beyond its limits.
TEST(RoundingFloor, APartedStepComparesNothingBeyondItsLimit) {
  const ModeTrace ref = two_steps();
  ModeTrace got = test::deep_copy(ref);
  got.gradients[1][0] *= 1 + 5e-5;       // conv.weight, no floor of its own
  got.final_state[1].second[0] += 3e-5;  // beyond the final state's limits
  MeasuredFloors f = floors_of(ref, 1e-6);
  f.set_parted(1, "bn.weight's gradient moved 1e-3 of its largest entry");
  EXPECT_FALSE(f.parted(0));
  EXPECT_TRUE(f.parted(1));
  EXPECT_TRUE(f.parted(-1));
  const ModeComparison m = compare_modes(ref, got, floor_policy(), &f);
  const reports::CheckRecord& g = find(m, reports::Stage::kGradients);
  EXPECT_EQ(g.status, reports::CheckStatus::kPass) << reports::describe_counts(g);
  EXPECT_EQ(g.incomparable, 1);
  EXPECT_EQ(g.incomparable_tensor, "conv.weight");
  EXPECT_EQ(g.incomparable_step, 1);
  EXPECT_EQ(find(m, reports::Stage::kParameters).incomparable, 1);
  // Before the parted step a fault is held to the fixed limit.
  ModeTrace early = test::deep_copy(ref);
  early.gradients[0][0] *= 1 + 5e-5;
  EXPECT_EQ(find(compare_modes(ref, early, floor_policy(), &f), reports::Stage::kGradients).status,
            reports::CheckStatus::kFail);
  // An earlier parting moves the start; a later one does not.
  f.set_parted(3, "later");
  EXPECT_EQ(f.parted_step(), 1);
  f.set_parted(0, "earlier");
  EXPECT_EQ(f.parted_step(), 0);
}

// (Note [Parted trajectories]) Free-running under autocast, a judged mode whose own gradient moved
// past half the float32 digits after the first step has parted (a weight's bf16 cast may have
// crossed, which no twin bounds): not comparable from there. At the first step every mode casts
// the same weights, so the same jump there fails.
TEST(RoundingFloor, AModeThatPartsAfterTheFirstStepIsNotJudgedFromThere) {
  const ModeTrace ref = two_steps();
  MeasuredFloors f = floors_of(ref, 1e-6);
  f.judged_mode_parts = true;
  ModeTrace got = test::deep_copy(ref);
  got.gradients[1][0] *= 1 + 1e-2;
  const ModeComparison m = compare_modes(ref, got, floor_policy(), &f);
  const reports::CheckRecord& g = find(m, reports::Stage::kGradients);
  EXPECT_EQ(g.status, reports::CheckStatus::kPass) << reports::describe_counts(g);
  EXPECT_EQ(g.incomparable, 1);
  EXPECT_EQ(g.incomparable_step, 1);
  f.judged_mode_parts = false;  // lockstep, or float32: the jump fails
  EXPECT_EQ(find(compare_modes(ref, got, floor_policy(), &f), reports::Stage::kGradients).status,
            reports::CheckStatus::kFail);
  f.judged_mode_parts = true;
  ModeTrace first = test::deep_copy(ref);
  first.gradients[0][0] *= 1 + 1e-2;
  EXPECT_EQ(find(compare_modes(ref, first, floor_policy(), &f), reports::Stage::kGradients).status,
            reports::CheckStatus::kFail);
}

TEST(RoundingFloor, LossAndFinalStateAreHeldToTheirAbsoluteFloors) {
  const ModeTrace ref = two_steps();
  ModeTrace got = test::deep_copy(ref);
  got.losses[1] += 1e-4;                 // 5 x atol + rtol |1.5|
  got.final_state[1].second[0] += 3e-5;  // 2.7 x atol + rtol |1|
  MeasuredFloors f;
  f.cap = kCap;
  f.set(reports::Stage::kLoss, 1, "loss", 4e-5);              // allows 1.6e-4
  f.set(reports::Stage::kParameters, -1, "bn.weight", 4e-6);  // allows 1.6e-5: not enough
  const ModeComparison m = compare_modes(ref, got, floor_policy(), &f);
  EXPECT_EQ(find(m, reports::Stage::kLoss).status, reports::CheckStatus::kPass);
  EXPECT_EQ(find(m, reports::Stage::kLoss).floored, 1);
  EXPECT_EQ(find(m, reports::Stage::kParameters).status, reports::CheckStatus::kFail);
  f.set(reports::Stage::kParameters, -1, "bn.weight", 1e-5);  // allows 4e-5
  EXPECT_EQ(find(compare_modes(ref, got, floor_policy(), &f), reports::Stage::kParameters).status,
            reports::CheckStatus::kPass);
}

TEST(RoundingFloor, AFinalParameterIsJudgedByWhatMovedIt) {
  ModeTrace ref = two_steps();
  ModeTrace got = test::deep_copy(ref);
  // bn.weight ended at 1 after travelling 30: its rounding is of 30's size, not of 1's.
  got.final_state[1].second[0] += 2e-5;  // beyond 1e-5 + 1.3e-6 x 1, within 1e-5 + 1.3e-6 x 30
  ASSERT_EQ(find(compare_modes(ref, got, floor_policy()), reports::Stage::kParameters).status,
            reports::CheckStatus::kFail);
  ref.parameter_travel = {at::zeros({8, 3}, at::kDouble), at::full({4}, 30.0, at::kDouble)};
  EXPECT_EQ(find(compare_modes(ref, got, floor_policy()), reports::Stage::kParameters).status,
            reports::CheckStatus::kPass);
  // A change the size of what moved it is still a failure.
  got.final_state[1].second[0] += 1e-3;
  EXPECT_EQ(find(compare_modes(ref, got, floor_policy()), reports::Stage::kParameters).status,
            reports::CheckStatus::kFail);
}

TEST(RoundingFloor, ZeroAgainstDdpTakesTheFloorOnlyWhenNotBitForBit) {
  const ModeTrace ddp = two_steps();
  const ModeTrace zero = moved(ddp, 7e-5);
  const MeasuredFloors f = floors_of(ddp, 2e-5);
  AgreementRule normalized{false, kLimit, false, "normalized"};
  EXPECT_EQ(ddp_agreement(ddp, zero, normalized, &f).checks.front().status,
            reports::CheckStatus::kPass);
  AgreementRule bitwise{true, 0.0, false, "bit for bit"};
  EXPECT_EQ(ddp_agreement(ddp, zero, bitwise, &f).checks.front().status,
            reports::CheckStatus::kFail);
}

TEST(RoundingFloor, TheVerdictRefusesFlooredNumbersNoFloorCanGive) {
  reports::CheckRecord c;
  c.name = reports::Stage::kGradients;
  c.measure = reports::Measure::kNormalized;
  c.limit = kLimit;
  c.items = 4;
  c.error = 1.75e-5;
  c.max_abs_diff = 7e-5;
  c.floored = 1;
  c.floor_error = 7e-5;
  c.floor_limit = 8e-5;
  c.status = reports::check_status(c, {});
  EXPECT_EQ(c.status, reports::CheckStatus::kPass);
  EXPECT_EQ(reports::check_inconsistency(c, "c"), "");
  c.floor_error = 9e-5;  // beyond its own floor limit: not a floored item
  EXPECT_NE(reports::check_inconsistency(c, "c"), "");
  c.floor_error = 1e-5;  // within the fixed limit: the floor admitted nothing
  EXPECT_NE(reports::check_inconsistency(c, "c"), "");
  c.floor_error = 7e-5;
  c.floored = 5;  // more than compared
  EXPECT_NE(reports::check_inconsistency(c, "c"), "");
  c.floored = 0;  // without floored items the worst difference must be within the limit
  EXPECT_EQ(reports::check_status(c, {}), reports::CheckStatus::kFail);
}

TEST(RoundingFloor, AReferenceThatIsNotFiniteLeavesTheCheckNotComparable) {
  reports::CheckRecord c;
  c.name = reports::Stage::kEvaluation;
  c.measure = reports::Measure::kTolerance;
  c.limit = 1.0;
  c.incomparable = 3;
  EXPECT_EQ(reports::check_status(c, {}), reports::CheckStatus::kNotComparable);
  c.outside = 1;  // a failure among them is a failure
  EXPECT_EQ(reports::check_status(c, {}), reports::CheckStatus::kFail);
  c.outside = 0;
  c.incomparable = 0;  // nothing compared and nothing left uncompared: nothing was judged
  EXPECT_EQ(reports::check_status(c, {}), reports::CheckStatus::kFail);
}

}  // namespace
}  // namespace ddpbench::compare
