// data_batch_plan_test.cpp — docs/ARCHITECTURE.md, contract 1: the union of the ranks' s-th local
// batches is exactly the contiguous block order[s*B : (s+1)*B] of the epoch order, for every step,
// including the short last one, so single, DP and DDP see the same samples at every step.
#include <gtest/gtest.h>

#include <algorithm>

#include "data/batch_plan.h"
#include "errors.h"

namespace ddpbench::data {
namespace {

struct PlanCase {
  int64_t n, k, global_batch;
  bool shuffle, drop_last;
};

class GlobalBatchPlanUnion : public ::testing::TestWithParam<PlanCase> {};

TEST_P(GlobalBatchPlanUnion, UnionOfLocalBatchesIsTheContiguousGlobalBlock) {
  const PlanCase c = GetParam();
  const GlobalBatchPlan plan({c.n, c.k, c.shuffle, 5, c.drop_last}, c.global_batch);
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    DistributedSampler s = plan.sampler();
    s.set_epoch(epoch);
    const std::vector<int64_t> order = s.epoch_order();
    const EpochPlan e = plan.epoch(epoch);
    int64_t covered = 0;
    for (int64_t step = 0; step < e.num_steps(); ++step) {
      std::vector<int64_t> got = e.global_batch(step);
      const int64_t begin = step * c.global_batch;
      const int64_t end = std::min<int64_t>(begin + c.global_batch, s.total_size());
      std::vector<int64_t> want(order.begin() + begin, order.begin() + end);
      ASSERT_EQ(got.size(), want.size()) << "step " << step;
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      ASSERT_EQ(got, want) << "epoch " << epoch << " step " << step;
      covered += static_cast<int64_t>(got.size());
    }
    EXPECT_EQ(covered, s.total_size()) << "every sample of the epoch is used exactly once";
    EXPECT_EQ(e.num_steps(), plan.steps_per_epoch());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Grid, GlobalBatchPlanUnion,
    ::testing::Values(PlanCase{10, 3, 3, false, false},   // padding, short last step
                      PlanCase{10, 3, 6, true, true},     // drop_last, short last step
                      PlanCase{100, 4, 16, true, false},  // 25 per rank, last local batch 1
                      PlanCase{64, 8, 64, true, false},   // exact fit
                      PlanCase{7, 8, 8, true, false},     // padding longer than the dataset
                      PlanCase{103, 2, 10, true, true}),
    [](const ::testing::TestParamInfo<PlanCase>& info) {
      const PlanCase& c = info.param;
      return "N" + std::to_string(c.n) + "_K" + std::to_string(c.k) + "_B" +
             std::to_string(c.global_batch) + (c.shuffle ? "_shuffle" : "") +
             (c.drop_last ? "_droplast" : "");
    });

TEST(GlobalBatchPlan, GlobalBatchIsRankOrderConcatenation) {
  const GlobalBatchPlan plan({10, 3, false, 0, false}, 6);
  const EpochPlan e = plan.epoch(0);
  // ranks: [0,3,6,9] [1,4,7,0] [2,5,8,1]; local batch 2.
  EXPECT_EQ(e.global_batch(0), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(e.global_batch(1), (std::vector<int64_t>{6, 9, 7, 0, 8, 1}));
  EXPECT_EQ(e.local_batch(1, 2), (std::vector<int64_t>{8, 1}));
}

TEST(GlobalBatchPlan, LocateWrapsIntoLaterEpochs) {
  const GlobalBatchPlan plan({10, 1, true, 0, false}, 4);  // 3 steps per epoch (4, 4, 2)
  EXPECT_EQ(plan.steps_per_epoch(), 3);
  EXPECT_EQ(plan.locate(0).epoch, 0);
  EXPECT_EQ(plan.locate(3).epoch, 1);
  EXPECT_EQ(plan.locate(3).step_in_epoch, 0);
  EXPECT_EQ(plan.locate(8).step_in_epoch, 2);
  EXPECT_NE(plan.epoch(0).global_batch(0), plan.epoch(1).global_batch(0));
}

// Throughput counts what the steps process: a batch larger than the ranks' shares processes the
// shares, and an epoch's last step only what is left.
TEST(GlobalBatchPlan, SamplesAtCountsWhatTheStepsReallyProcess) {
  const GlobalBatchPlan bigger_than_data({20, 2, false, 0, false}, 40);
  EXPECT_EQ(bigger_than_data.samples_at(0), 20);
  EXPECT_DOUBLE_EQ(bigger_than_data.mean_samples_per_step(2, 2), 20.0);
  const GlobalBatchPlan ragged({10, 1, false, 0, false}, 4);  // steps of 4, 4, 2
  EXPECT_EQ(ragged.samples_at(0), 4);
  EXPECT_EQ(ragged.samples_at(2), 2);
  EXPECT_EQ(ragged.samples_at(3), 4);  // the next epoch
  EXPECT_DOUBLE_EQ(ragged.mean_samples_per_step(0, 3), 10.0 / 3);
}

TEST(GlobalBatchPlan, RejectsBatchNotDivisibleByWorldSize) {
  EXPECT_THROW(GlobalBatchPlan({10, 3, false, 0, false}, 4), InputError);
  EXPECT_THROW(GlobalBatchPlan({10, 3, false, 0, false}, 0), InputError);
  EXPECT_THROW(GlobalBatchPlan({2, 4, false, 0, true}, 4), InputError);  // no sample per rank
}

}  // namespace
}  // namespace ddpbench::data
