// data_batch_plan_test.cpp — Note [Same samples in every mode] in docs/ARCHITECTURE.md: the union
// of the ranks' s-th local batches is exactly the contiguous block order[s*B : (s+1)*B] of the
// epoch order, for every step, including the short last one, so single, DP and DDP see the same
// samples at every step. With a global batch the world size does not divide, every rank's batches
// are what PyTorch's DataLoader over its DistributedSampler gives
// (reference/uneven_batches_oracle.py), epoch by epoch, including the steps where a rank has run
// out (Join).
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "data/batch_plan.h"
#include "errors.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

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

TEST(GlobalBatchPlan, RejectsBatchesThatLeaveARankNothing) {
  EXPECT_THROW(GlobalBatchPlan({10, 3, false, 0, false}, 2), InputError);  // a rank gets 0
  EXPECT_THROW(GlobalBatchPlan({10, 3, false, 0, false}, 0), InputError);
  EXPECT_THROW(GlobalBatchPlan({2, 4, false, 0, true}, 4), InputError);  // no sample per rank
  EXPECT_NO_THROW(GlobalBatchPlan({10, 3, false, 0, false}, 4));         // 2,1,1
}

TEST(GlobalBatchPlan, SplitSizesAreTensorSplits) {
  EXPECT_EQ(split_sizes(20, 3), (std::vector<int64_t>{7, 7, 6}));
  EXPECT_EQ(split_sizes(10, 4), (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(split_sizes(16, 2), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(split_sizes(3, 3), (std::vector<int64_t>{1, 1, 1}));
}

// 100 samples, 3 ranks, batch 20: shares of 34 (2 padded), local batches 7,7,6, so ranks 0 and 1
// have 5 batches and rank 2 six; on step 5 only rank 2 trains, on its last 4 samples.
TEST(GlobalBatchPlan, UnevenBatchesLetRanksRunOutAndTheChunksSayWho) {
  const GlobalBatchPlan plan({100, 3, true, 0, false}, 20);
  EXPECT_TRUE(plan.uneven());
  EXPECT_EQ(plan.local_batches(), (std::vector<int64_t>{7, 7, 6}));
  EXPECT_EQ(plan.local_batch(), 7);
  EXPECT_EQ(plan.steps_per_epoch(), 6);
  EXPECT_EQ(plan.rank_steps_per_epoch(0), 5);
  EXPECT_EQ(plan.rank_steps_per_epoch(2), 6);
  const EpochPlan e = plan.epoch(1);
  EXPECT_TRUE(e.uneven());
  EXPECT_EQ(e.chunk_sizes(0), (std::vector<int64_t>{7, 7, 6}));
  EXPECT_EQ(e.chunk_sizes(4), (std::vector<int64_t>{6, 6, 6}));  // 34 - 28: the short last ones
  EXPECT_EQ(e.chunk_sizes(5), (std::vector<int64_t>{0, 0, 4}));  // ranks 0 and 1 have joined
  EXPECT_TRUE(e.local_batch(5, 0).empty());
  EXPECT_EQ(e.global_batch(5), e.local_batch(5, 2));
  EXPECT_EQ(plan.samples_at(5), 4);
  EXPECT_EQ(plan.samples_at(6), 20);  // the next epoch's first step
  EXPECT_THROW(e.local_batch(6, 2), InputError);
  // Every rank's share is trained on once per epoch, in rank order within each step.
  for (int64_t r = 0; r < 3; ++r) {
    std::vector<int64_t> seen;
    for (int64_t step = 0; step < e.num_steps(); ++step) {
      const auto part = e.local_batch(step, r);
      EXPECT_EQ(static_cast<int64_t>(part.size()), e.chunk_sizes(step)[static_cast<size_t>(r)]);
      seen.insert(seen.end(), part.begin(), part.end());
    }
    EXPECT_EQ(seen, e.rank_indices(r)) << "rank " << r;
  }
  const GlobalBatchPlan even({100, 4, true, 0, false}, 20);
  EXPECT_FALSE(even.uneven());
  EXPECT_FALSE(even.epoch(0).uneven());
}

TEST(GlobalBatchPlanOracle, UnevenBatchesMatchPyTorchDataLoadersEpochByEpoch) {
  const auto r = testing::run_process(
      {testing::kPython, std::string(testing::kSourceDir) + "/reference/uneven_batches_oracle.py"});
  ASSERT_EQ(r.exit_code, 0) << "the oracle needs python3-torch (ci/install-deps.sh): " << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  int64_t compared = 0;
  int64_t with_joined_ranks = 0;
  for (const auto& c : doc.at("cases")) {
    const std::string where = c.dump().substr(0, 80);
    const GlobalBatchPlan plan(
        {c.at("N").get<int64_t>(), c.at("K").get<int64_t>(), c.at("shuffle").get<bool>(),
         c.at("seed").get<int64_t>(), c.at("drop_last").get<bool>()},
        c.at("B").get<int64_t>());
    ASSERT_EQ(plan.local_batches(), c.at("local_batches").get<std::vector<int64_t>>()) << where;
    const auto epochs =
        c.at("epochs").get<std::vector<std::vector<std::vector<std::vector<int64_t>>>>>();
    for (size_t epoch = 0; epoch < epochs.size(); ++epoch) {
      const EpochPlan e = plan.epoch(static_cast<int64_t>(epoch));
      size_t most = 0;
      for (size_t rank = 0; rank < epochs[epoch].size(); ++rank) {
        const auto& want = epochs[epoch][rank];
        most = std::max(most, want.size());
        ASSERT_EQ(plan.rank_steps_per_epoch(static_cast<int64_t>(rank)),
                  static_cast<int64_t>(want.size()))
            << where;
        for (int64_t step = 0; step < e.num_steps(); ++step) {
          const auto s = static_cast<size_t>(step);
          const std::vector<int64_t> expect = s < want.size() ? want[s] : std::vector<int64_t>{};
          ASSERT_EQ(e.local_batch(step, static_cast<int64_t>(rank)), expect)
              << where << " epoch " << epoch << " rank " << rank << " step " << step;
          if (expect.empty()) ++with_joined_ranks;
          ++compared;
        }
      }
      ASSERT_EQ(e.num_steps(), static_cast<int64_t>(most)) << where;
      ASSERT_EQ(plan.steps_per_epoch(), static_cast<int64_t>(most)) << where;
    }
  }
  EXPECT_GT(with_joined_ranks, 0) << "the grid must include ranks that run out (Join)";
  RecordProperty("batches", static_cast<int>(compared));
}

}  // namespace
}  // namespace ddpbench::data
