// modes_zero_partition_test.cpp — the zero mode's partition of parameters over ranks: PyTorch's
// ZeroRedundancyOptimizer rule, against PyTorch itself (reference/zero_partition_oracle.py: K 1..8
// over resnet18's parameters in one and two groups, random counts with ties, edge cases) and on
// hand-worked cases that say what the rule is.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "modes/zero/zero_partition.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace ddpbench::modes::zero {
namespace {

TEST(ZeroPartition, LargestFirstToTheLeastLoadedRankTiesToTheLowest) {
  // Sorted: 8 (#1), 5 (#0), 5 (#3, after #0: stable), 2 (#2). 8 -> rank 0; 5 -> rank 1 (0 < 8);
  // 5 -> rank 1 (5 < 8); 2 -> rank 0 (8 < 10).
  const ZeroPartition p = partition_parameters({{5, 8, 2, 5}}, 2);
  EXPECT_EQ(p.owner, (std::vector<int64_t>{1, 0, 0, 1}));
  EXPECT_EQ(p.rank_params, (std::vector<std::vector<int64_t>>{{1, 2}, {0, 3}}));
  EXPECT_EQ(p.rank_numel, (std::vector<int64_t>{10, 10}));
}

TEST(ZeroPartition, TotalsCarryAcrossGroupsAndNumberingContinues) {
  // Group 0: 6 -> rank 0. Group 1 (parameters #1, #2): 4 -> rank 1 (0 < 6), 3 -> rank 1 (4 < 6).
  const ZeroPartition p = partition_parameters({{6}, {4, 3}}, 2);
  EXPECT_EQ(p.owner, (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(p.rank_numel, (std::vector<int64_t>{6, 7}));
}

TEST(ZeroPartition, RanksWithoutParametersAndBadArguments) {
  const ZeroPartition p = partition_parameters({{3}}, 3);
  EXPECT_EQ(p.rank_params, (std::vector<std::vector<int64_t>>{{0}, {}, {}}));
  EXPECT_THROW(partition_parameters({{3}}, 0), std::invalid_argument);
  EXPECT_THROW(partition_parameters({{-1}}, 2), std::invalid_argument);
}

TEST(ZeroPartitionOracle, MatchesZeroRedundancyOptimizerOnTheWholeGrid) {
  const auto r = testing::run_process(
      {testing::kPython, std::string(testing::kSourceDir) + "/reference/zero_partition_oracle.py"});
  ASSERT_EQ(r.exit_code, 0) << "the oracle needs python3-torch (ci/install-deps.sh): " << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& cases = doc.at("cases");
  ASSERT_GE(cases.size(), 300u) << "the grid shrank: the test would prove less";
  for (const auto& c : cases) {
    const auto groups = c.at("groups").get<std::vector<std::vector<int64_t>>>();
    const ZeroPartition p = partition_parameters(groups, c.at("world").get<int64_t>());
    ASSERT_EQ(p.rank_params, c.at("ranks").get<std::vector<std::vector<int64_t>>>())
        << c.dump().substr(0, 200);
  }
  RecordProperty("cases", static_cast<int>(cases.size()));
  RecordProperty("resnet18", doc.at("resnet18").get<bool>() ? "yes" : "no");
}

}  // namespace
}  // namespace ddpbench::modes::zero
