// modes_ddp_bucket_assignment_test.cpp — buckets follow PyTorch's rule: reverse registration
// order, a small first bucket, then the cap; every parameter in exactly one bucket.
#include <gtest/gtest.h>

#include <set>

#include "modes/ddp/bucket_assignment.h"

namespace ddpbench::modes::ddp {
namespace {

using Buckets = std::vector<std::vector<int64_t>>;

TEST(BucketAssignment, ReverseOrderWithSmallFirstBucket) {
  // Four 4-byte parameters, first bucket 1 byte, cap 8 bytes.
  EXPECT_EQ(assign_buckets({4, 4, 4, 4}, {1, 8}), (Buckets{{3}, {2, 1}, {0}}));
  EXPECT_EQ(assign_buckets({4, 4, 4, 4}, {8, 8}), (Buckets{{3, 2}, {1, 0}}));
  EXPECT_EQ(assign_buckets({4, 4, 4, 4}, {1000, 1000}), (Buckets{{3, 2, 1, 0}}));
}

TEST(BucketAssignment, LargeParameterClosesItsBucket) {
  EXPECT_EQ(assign_buckets({1, 100, 1, 1}, {10, 10}), (Buckets{{3, 2, 1}, {0}}));
}

TEST(BucketAssignment, DefaultLimitsOnAResNetSizedModel) {
  // 62 tensors, ~52 MB in all (ResNet-18-like): first bucket ~1 MiB, then 25 MiB buckets.
  std::vector<int64_t> bytes;
  for (int i = 0; i < 60; ++i) bytes.push_back((i % 6 + 1) * 200'000);
  bytes.push_back(2'359'296 * 4);
  bytes.push_back(20'480);
  const Buckets b = assign_buckets(bytes, BucketLimits{});
  ASSERT_GE(b.size(), 3u);
  EXPECT_EQ(b[0].front(), 61) << "the last-registered parameter goes first";
  std::set<int64_t> seen;
  for (const auto& bucket : b) {
    for (int64_t i : bucket) EXPECT_TRUE(seen.insert(i).second) << "parameter " << i << " twice";
  }
  EXPECT_EQ(seen.size(), bytes.size());
}

}  // namespace
}  // namespace ddpbench::modes::ddp
