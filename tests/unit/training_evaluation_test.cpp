// training_evaluation_test.cpp — the evaluation pass's arithmetic (training/evaluation.h): the
// per-rank tallies of DistributedSampler(shuffle=False) shares summed as the allreduce sums them
// equal the single-device expectation with and without padding duplicates, the duplicates are
// counted, and the check fails on a lost sample, a changed prediction or a loss beyond tolerance.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "data/distributed_sampler.h"
#include "training/evaluation.h"

namespace ddpbench::training {
namespace {

// Distinct per-sample values (gloo's j*stride + rank idea): a misplaced or repeated sample
// changes the sums.
EvalSamples whole_set(int64_t n) {
  EvalSamples s;
  for (int64_t i = 0; i < n; ++i) {
    s.loss.push_back(0.5 + 0.001 * static_cast<double>(i * i % 97));
    s.correct.push_back(static_cast<uint8_t>(i % 3 != 0));
  }
  return s;
}

// What `ranks` DDP ranks reduce: each tallies its share, the payloads are summed.
EvalTotals reduced_over_ranks(const EvalSamples& set, int64_t ranks, int64_t faulty_rank = -1) {
  data::SamplerOptions o;
  o.dataset_size = static_cast<int64_t>(set.loss.size());
  o.num_replicas = ranks;
  o.shuffle = false;
  const data::DistributedSampler sampler(o);
  at::Tensor sum = at::zeros({6}, at::kDouble);
  for (int64_t r = 0; r < ranks; ++r) {
    EvalSamples share;
    std::vector<bool> padding;
    const std::vector<int64_t> idx = sampler.indices(r);
    for (size_t j = 0; j < idx.size(); ++j) {
      share.loss.push_back(set.loss[static_cast<size_t>(idx[j])]);
      share.correct.push_back(set.correct[static_cast<size_t>(idx[j])]);
      padding.push_back(sampler.is_padding(r, static_cast<int64_t>(j)));
    }
    sum += totals_to_payload(tally_share(share, padding, r == faulty_rank));
  }
  return totals_from_payload(sum);
}

const scenarios::Tolerance kFloat32{1.3e-6, 1e-5, "test"};

TEST(Evaluation, SharesSumToTheSingleDeviceFiguresWithAndWithoutPadding) {
  const EvalSamples set = whole_set(10);
  const EvalTotals reduced = reduced_over_ranks(set, 4);  // 10 = 4*3 - 2: two duplicates
  const EvalTotals expected = expected_totals(set, 4);
  EXPECT_EQ(reduced.all.count, 12);
  EXPECT_EQ(reduced.unique.count, 10);
  EXPECT_EQ(expected.all.count, 12);
  EXPECT_EQ(reduced.all.correct, expected.all.correct);
  EXPECT_EQ(reduced.unique.correct, expected.unique.correct);
  EXPECT_NEAR(reduced.all.loss, expected.all.loss, 1e-12);
  EXPECT_NEAR(reduced.unique.loss, expected.unique.loss, 1e-12);
  // The duplicates are samples 0 and 1 (padding from the head of the order): 0 is wrong, 1 right.
  EXPECT_EQ(reduced.all.correct - reduced.unique.correct, 1.0);
  EXPECT_EQ(evaluation_check(reduced, expected, kFloat32, "").status, reports::CheckStatus::kPass);
}

TEST(Evaluation, DivisibleSetHasNoDuplicates) {
  const EvalSamples set = whole_set(12);
  const EvalTotals reduced = reduced_over_ranks(set, 4);
  EXPECT_EQ(reduced.all.count, 12);
  EXPECT_EQ(reduced.unique.count, 12);
  const reports::EvaluationRecord r = evaluation_record(reduced, "set");
  EXPECT_EQ(r.padded, 0);
  EXPECT_NE(r.summary.find("no padding duplicates"), std::string::npos) << r.summary;
}

TEST(Evaluation, RecordStatesWhatPaddingChanged) {
  const EvalSamples set = whole_set(10);
  const reports::EvaluationRecord r = evaluation_record(reduced_over_ranks(set, 4), "set");
  EXPECT_EQ(r.samples, 10);
  EXPECT_EQ(r.count, 12);
  EXPECT_EQ(r.padded, 2);
  EXPECT_NE(r.accuracy, r.accuracy_without_padding);
  EXPECT_NE(r.summary.find("2 padding duplicate(s) changed accuracy by"), std::string::npos)
      << r.summary;
}

TEST(Evaluation, CheckFailsWhenARankLosesASample) {
  const EvalSamples set = whole_set(10);
  const reports::CheckRecord c = evaluation_check(reduced_over_ranks(set, 4, /*faulty_rank=*/2),
                                                  expected_totals(set, 4), kFloat32, "");
  EXPECT_EQ(c.status, reports::CheckStatus::kFail);
  EXPECT_NE(c.detail.find("11 samples counted, single-device 12"), std::string::npos) << c.detail;
}

TEST(Evaluation, CheckFailsOnAChangedPredictionOrLoss) {
  const EvalSamples set = whole_set(8);
  const EvalTotals expected = expected_totals(set, 2);
  EvalTotals wrong = expected;
  wrong.unique.correct += 1;
  EXPECT_EQ(evaluation_check(wrong, expected, kFloat32, "").status, reports::CheckStatus::kFail);
  EvalTotals lossy = expected;
  lossy.all.loss *= 1.001;
  const reports::CheckRecord c = evaluation_check(lossy, expected, kFloat32, "");
  EXPECT_EQ(c.status, reports::CheckStatus::kFail);
  EXPECT_GT(c.max_abs_diff, 1e-4);
  // Rounding-sized differences pass.
  EvalTotals rounded = expected;
  rounded.all.loss *= 1 + 1e-9;
  EXPECT_EQ(evaluation_check(rounded, expected, kFloat32, "").status, reports::CheckStatus::kPass);
}

TEST(Evaluation, DeclaredReasonTurnsADifferenceIntoAnExpectedDivergence) {
  const EvalSamples set = whole_set(8);
  const EvalTotals expected = expected_totals(set, 2);
  EvalTotals wrong = expected;
  wrong.all.correct -= 1;
  const reports::CheckRecord c = evaluation_check(wrong, expected, kFloat32, "own statistics");
  EXPECT_EQ(c.status, reports::CheckStatus::kExpectedDivergence);
  EXPECT_NE(c.detail.find("own statistics"), std::string::npos);
  EXPECT_EQ(evaluation_check(expected, expected, kFloat32, "own statistics").status,
            reports::CheckStatus::kPass);
}

TEST(Evaluation, PayloadRoundTripsAndSharesMustMatchTheirFlags) {
  EvalTotals t;
  t.all = {3, 1.25, 4};
  t.unique = {2, 1.0, 3};
  const EvalTotals back = totals_from_payload(totals_to_payload(t));
  EXPECT_EQ(back.all.count, 4);
  EXPECT_EQ(back.unique.correct, 2);
  EXPECT_EQ(back.all.loss, 1.25);
  EXPECT_THROW(tally_share(whole_set(3), {false, false}), std::logic_error);
}

}  // namespace
}  // namespace ddpbench::training
