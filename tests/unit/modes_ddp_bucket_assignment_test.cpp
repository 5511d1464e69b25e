// modes_ddp_bucket_assignment_test.cpp — buckets follow PyTorch's DDP (bucket_assignment.h): one
// bucket in registration order first; the size rule over registration order, reversed, when
// unused parameters are searched; the rebuild over the gradient-ready order, not reversed; every
// parameter in exactly one bucket.
#include <gtest/gtest.h>
#include <torch/version.h>

#include <set>

#include "modes/ddp/bucket_assignment.h"

namespace ddpbench::modes::ddp {
namespace {

using Buckets = std::vector<std::vector<int64_t>>;

TEST(BucketAssignment, SizeRuleClosesABucketOnceItReachesItsLimit) {
  // Four 4-byte parameters, first limit 1 byte, then 8 bytes.
  EXPECT_EQ(bucket_by_size({0, 1, 2, 3}, {4, 4, 4, 4}, {1, 8}), (Buckets{{0}, {1, 2}, {3}}));
  EXPECT_EQ(bucket_by_size({3, 2, 1, 0}, {4, 4, 4, 4}, {8}), (Buckets{{3, 2}, {1, 0}}));
  EXPECT_EQ(bucket_by_size({0, 1, 2, 3}, {1, 100, 1, 1}, {10}), (Buckets{{0, 1}, {2, 3}}));
}

TEST(BucketAssignment, FirstIterationIsOneBucketInRegistrationOrder) {
  EXPECT_EQ(initial_buckets({4, 4, 4, 4}, {1, 8}, false), (Buckets{{0, 1, 2, 3}}));
}

TEST(BucketAssignment, UnusedParameterSearchBucketsBySizeReversed) {
  // c10d walks registration order (small first bucket first), DDP hands the list over reversed.
  EXPECT_EQ(initial_buckets({4, 4, 4, 4}, {1, 8}, true), (Buckets{{3}, {1, 2}, {0}}));
}

TEST(BucketAssignment, RebuildFollowsTheReadyOrderWithTheSmallBucketFirst) {
  const Buckets b = rebuilt_buckets({3, 2, 1, 0}, {4, 4, 4, 4}, {1, 8});
  EXPECT_EQ(b, (Buckets{{3}, {2, 1}, {0}}));
}

TEST(BucketAssignment, AGivenCapDropsTheSmallFirstBucketOnTorch2Only) {
  const BucketLimits given{1, 8, true};
  const Buckets b = rebuilt_buckets({3, 2, 1, 0}, {4, 4, 4, 4}, given);
#if TORCH_VERSION_MAJOR >= 2
  EXPECT_EQ(b, (Buckets{{3, 2}, {1, 0}}));
#else
  EXPECT_EQ(b, (Buckets{{3}, {2, 1}, {0}}));
#endif
}

TEST(BucketAssignment, DefaultLimitsOnAResNetSizedModel) {
  // 62 tensors, ~52 MB in all (ResNet-18-like): first bucket ~1 MiB, then 25 MiB buckets.
  std::vector<int64_t> bytes;
  std::vector<int64_t> ready;
  for (int i = 0; i < 60; ++i) bytes.push_back((i % 6 + 1) * 200'000);
  bytes.push_back(2'359'296 * 4);
  bytes.push_back(20'480);
  for (int64_t i = static_cast<int64_t>(bytes.size()) - 1; i >= 0; --i) ready.push_back(i);
  const Buckets b = rebuilt_buckets(ready, bytes, BucketLimits{});
  ASSERT_GE(b.size(), 3u);
  EXPECT_EQ(b[0].front(), 61) << "the first-ready parameter goes first";
  std::set<int64_t> seen;
  for (const auto& bucket : b) {
    for (int64_t i : bucket) EXPECT_TRUE(seen.insert(i).second) << "parameter " << i << " twice";
  }
  EXPECT_EQ(seen.size(), bytes.size());
}

}  // namespace
}  // namespace ddpbench::modes::ddp
