// trace_reduction_check_test.cpp — Note [A reduction judged by its own contributions]
// (trace/reduction_check.h): a reduced gradient computed from its ranks' gradients in any
// summation order, with the average's division or PyTorch's reciprocal before or after the sum,
// lies within the range the check measures; with two ranks that range is a point (a sum of two
// has one rounding in any order); a contribution scaled after its rank's hook saw it (a grad
// fault of 1e-5) lies outside it, in ulps; fingerprints are judged by their sum; a compression
// hook's float16 arithmetic is one of the reductions measured.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "trace/reduction_check.h"

namespace ddpbench::trace {
namespace {

std::vector<at::Tensor> gradients(int64_t ranks, int64_t n = 4096) {
  torch::manual_seed(7);
  std::vector<at::Tensor> out;
  // Real gradients cancel: elements of both signs and spread magnitudes.
  for (int64_t r = 0; r < ranks; ++r) out.push_back(torch::randn({n}) * torch::rand({n}) * 0.1);
  return out;
}

// ((c0 + c1) + c2) ... in rank order from `first`, each first multiplied by 1/D as PyTorch's
// Reducer does.
at::Tensor ring_sum(const std::vector<at::Tensor>& c, size_t first) {
  const auto d = static_cast<double>(c.size());
  at::Tensor s = c[first] * at::scalar_tensor(1.0 / d, at::kFloat);
  for (size_t i = 1; i < c.size(); ++i) {
    s = s + c[(first + i) % c.size()] * at::scalar_tensor(1.0 / d, at::kFloat);
  }
  return s;
}

ReductionInputs inputs(std::vector<at::Tensor> c, at::Tensor reduced) {
  ReductionInputs in;
  in.divisor = static_cast<int64_t>(c.size());
  in.contributions = std::move(c);
  in.reduced = std::move(reduced);
  return in;
}

TEST(ReductionCheck, TwoRanksHaveOneRoundingInAnyOrder) {
  const auto c = gradients(2);
  const ReductionCheck valid = check_reduction(inputs(c, (c[1] + c[0]) / 2));
  ASSERT_TRUE(valid.measured);
  EXPECT_TRUE(valid.valid);
  EXPECT_EQ(valid.range_ulps, 0) << "a sum of two has one result";
  EXPECT_EQ(valid.outside_ulps, 0);
  // One ulp off in one element is already no sum of these two.
  at::Tensor nudged = ((c[0] + c[1]) / 2).clone();
  nudged[5] = std::nextafter(nudged[5].item<float>(), 1.0f);
  const ReductionCheck off = check_reduction(inputs(c, nudged));
  EXPECT_FALSE(off.valid);
  EXPECT_NEAR(off.outside_ulps, 1.0, 1e-9);
}

TEST(ReductionCheck, EveryOrderOfThreeOrFourRanksIsWithinTheRangeAndAFaultIsNot) {
  for (int64_t ranks : {3, 4}) {
    const auto c = gradients(ranks);
    for (size_t first = 0; first < c.size(); ++first) {
      const ReductionCheck ring = check_reduction(inputs(c, ring_sum(c, first)));
      EXPECT_TRUE(ring.valid) << ranks << " ranks from " << first << ": " << ring.outside_ulps;
    }
    // The division after a pairwise sum (recursive halving), as FSDP divides.
    at::Tensor tree =
        ranks == 4 ? ((c[0] + c[2]) + (c[1] + c[3])) / 4.0 : ((c[2] + c[0]) + c[1]) / 3.0;
    EXPECT_TRUE(check_reduction(inputs(c, tree)).valid) << ranks;
    const ReductionCheck measured = check_reduction(inputs(c, ring_sum(c, 0)));
    EXPECT_GT(measured.range_ulps, 0) << "orders of " << ranks << " ranks round apart somewhere";
    // A grad fault: the last rank's gradient scaled by 1 + 1e-5 after its hook recorded it.
    std::vector<at::Tensor> faulted = c;
    faulted.back() = faulted.back() * (1 + 1e-5);
    const ReductionCheck fault = check_reduction(inputs(c, ring_sum(faulted, 0)));
    EXPECT_FALSE(fault.valid) << ranks;
    EXPECT_GT(fault.outside_ulps, 10) << ranks;
  }
}

TEST(ReductionCheck, BeyondFourRanksTheListedOrdersAndTheirWidthHold) {
  const auto c = gradients(6);
  EXPECT_TRUE(check_reduction(inputs(c, ring_sum(c, 2))).valid);
  std::vector<at::Tensor> faulted = c;
  faulted[3] = faulted[3] * (1 + 1e-4);
  EXPECT_FALSE(check_reduction(inputs(c, ring_sum(faulted, 0))).valid);
}

TEST(ReductionCheck, ACompressionHooksFloat16SumIsOneOfTheReductions) {
  const auto c = gradients(3);
  // PyTorch's fp16_compress_hook: cast, divide in float16, allreduce in float16, cast back.
  at::Tensor s = c[0].to(at::kHalf) / 3;
  for (size_t i = 1; i < c.size(); ++i) s = s + c[i].to(at::kHalf) / 3;
  ReductionInputs in = inputs(c, s.to(at::kFloat));
  in.wire = at::kHalf;
  EXPECT_TRUE(check_reduction(in).valid);
  in.wire = at::kFloat;  // the same bytes judged as a float32 reduction: far outside its range
  EXPECT_FALSE(check_reduction(in).valid);
}

TEST(ReductionCheck, FingerprintsAreJudgedByTheirSum) {
  const auto c = gradients(3);
  const auto fingerprint = [](const at::Tensor& t) {
    const at::Tensor d = t.to(at::kDouble);
    return at::stack({d.sum(), d.abs().sum(), d.norm(), d.abs().max()});
  };
  std::vector<at::Tensor> prints;
  for (const at::Tensor& t : c) prints.push_back(fingerprint(t));
  ReductionInputs in = inputs(prints, fingerprint(ring_sum(c, 1)));
  in.fingerprint = true;
  EXPECT_TRUE(check_reduction(in).valid);
  std::vector<at::Tensor> faulted = c;
  faulted[1] = faulted[1] * (1 + 1e-3);
  in.reduced = fingerprint(ring_sum(faulted, 0));
  EXPECT_FALSE(check_reduction(in).valid);
}

TEST(ReductionCheck, ContributionsThatDoNotFitMeasureNothing) {
  const auto c = gradients(2);
  EXPECT_FALSE(check_reduction(inputs({}, c[0])).measured);
  EXPECT_FALSE(check_reduction(inputs({c[0], c[1].narrow(0, 0, 10)}, c[0])).measured);
}

}  // namespace
}  // namespace ddpbench::trace
