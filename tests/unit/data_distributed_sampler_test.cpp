// data_distributed_sampler_test.cpp — the PyTorch DistributedSampler rules, checked on cases
// worked out by hand (the full Python oracle grid is in data_sampler_oracle_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "data/distributed_sampler.h"
#include "errors.h"

namespace ddpbench::data {
namespace {

using Ranks = std::vector<std::vector<int64_t>>;

Ranks partition(int64_t n, int64_t k, bool shuffle, bool drop_last, int64_t seed = 0,
                int64_t epoch = 0) {
  DistributedSampler s({n, k, shuffle, seed, drop_last});
  s.set_epoch(epoch);
  Ranks out;
  for (int64_t r = 0; r < k; ++r) out.push_back(s.indices(r));
  return out;
}

// The seed example: padding repeats the head of the list, never zeros.
TEST(DistributedSampler, SeedExamplePadsFromTheHead) {
  EXPECT_EQ(partition(10, 3, false, false), (Ranks{{0, 3, 6, 9}, {1, 4, 7, 0}, {2, 5, 8, 1}}));
}

TEST(DistributedSampler, SeedExampleDropLastDropsTheTail) {
  EXPECT_EQ(partition(10, 3, false, true), (Ranks{{0, 3, 6}, {1, 4, 7}, {2, 5, 8}}));
}

TEST(DistributedSampler, PaddingLongerThanDatasetRepeatsTheWholeList) {
  // N=2, K=5: total 5, padding 3 > N, Python repeats [0,1] -> [0,1,0,1,0].
  EXPECT_EQ(partition(2, 5, false, false), (Ranks{{0}, {1}, {0}, {1}, {0}}));
}

TEST(DistributedSampler, DropLastWithFewerSamplesThanRanksGivesEmptyRanks) {
  DistributedSampler s({2, 5, false, 0, true});
  EXPECT_EQ(s.num_samples(), 0);
  EXPECT_TRUE(s.indices(4).empty());
  EXPECT_EQ(s.dropped_count(), 2);
}

TEST(DistributedSampler, CountsPaddingAndDropping) {
  DistributedSampler pad({10, 3, false, 0, false});
  EXPECT_EQ(pad.num_samples(), 4);
  EXPECT_EQ(pad.total_size(), 12);
  EXPECT_EQ(pad.padded_count(), 2);
  EXPECT_EQ(pad.dropped_count(), 0);
  DistributedSampler drop({10, 3, false, 0, true});
  EXPECT_EQ(drop.total_size(), 9);
  EXPECT_EQ(drop.padded_count(), 0);
  EXPECT_EQ(drop.dropped_count(), 1);
}

TEST(DistributedSampler, ShuffleIsAPermutationThatChangesWithEpochAndSeed) {
  const Ranks e0 = partition(50, 2, true, false, 3, 0);
  const Ranks e1 = partition(50, 2, true, false, 3, 1);
  const Ranks other_seed = partition(50, 2, true, false, 4, 0);
  EXPECT_NE(e0, e1);
  EXPECT_NE(e0, other_seed);
  std::set<int64_t> all;
  for (const auto& r : e0) all.insert(r.begin(), r.end());
  EXPECT_EQ(all.size(), 50u);
  EXPECT_EQ(*all.rbegin(), 49);
  // Same (seed, epoch) -> same order: the shuffle is keyed, not stateful.
  EXPECT_EQ(e0, partition(50, 2, true, false, 3, 0));
}

TEST(DistributedSampler, AllIndicesEqualsPerRankIndices) {
  DistributedSampler s({37, 4, true, 9, false});
  s.set_epoch(2);
  const Ranks all = s.all_indices();
  for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(all[static_cast<size_t>(r)], s.indices(r));
}

TEST(DistributedSampler, RejectsBadArguments) {
  EXPECT_THROW(DistributedSampler({10, 0, false, 0, false}), InputError);
  EXPECT_THROW(DistributedSampler({10, -2, false, 0, false}), InputError);
  EXPECT_THROW(DistributedSampler({0, 2, false, 0, false}), InputError);
  EXPECT_THROW(DistributedSampler({10, 2, false, -1, false}), InputError);
  DistributedSampler s({10, 3, false, 0, false});
  EXPECT_THROW(s.indices(3), InputError);
  EXPECT_THROW(s.indices(-1), InputError);
}

}  // namespace
}  // namespace ddpbench::data
