// modes_zero_hsdp_mesh_test.cpp — HSDP's arithmetic without ranks (modes/zero/hsdp_mesh.h,
// comm/communicator_split.h): the divide factors are PyTorch 2.11 FSDP2's
// _get_gradient_divide_factors for each dtype (AVG on both collectives for float32 and bfloat16;
// PyTorch's pre/post loop for float64 and float16, quirks included: at K = 6 the loop stops at a
// pre-factor of 4, which does not divide 6), the one-replica zero keeps its 1/K before the sum,
// and a split's groups follow the ranks' colors in world order.
#include <gtest/gtest.h>

#include "comm/communicator_split.h"
#include "modes/zero/hsdp_mesh.h"

namespace ddpbench::modes::zero {
namespace {

struct FactorRow {
  int64_t world, shard_group;
  at::ScalarType dtype;
  double before, after_shard, after;
  bool one_replica;
};

TEST(HsdpDivideFactors, ArePyTorchsForEveryDtypeAndMesh) {
  const FactorRow rows[] = {
      {4, 2, at::kFloat, 1, 2, 2, false},    {4, 2, at::kBFloat16, 1, 2, 2, false},
      {4, 2, at::kDouble, 2, 1, 2, false},   {4, 2, at::kHalf, 2, 1, 2, false},
      {6, 3, at::kDouble, 4, 1, 1.5, false}, {6, 2, at::kFloat, 1, 2, 3, false},
      {8, 2, at::kDouble, 4, 1, 2, false},   {4, 4, at::kDouble, 4, 1, 1, true},
      {4, 0, at::kFloat, 4, 1, 1, true},
  };
  for (const FactorRow& r : rows) {
    const DivideFactors f = hsdp_divide_factors(r.world, r.shard_group, r.dtype);
    SCOPED_TRACE(::testing::Message()
                 << "K=" << r.world << " S=" << r.shard_group << " " << c10::toString(r.dtype));
    EXPECT_EQ(f.before, r.before);
    EXPECT_EQ(f.after_shard, r.after_shard);
    EXPECT_EQ(f.after, r.after);
    EXPECT_EQ(f.one_replica, r.one_replica);
    // Whatever the split, the divisions make the average over all K ranks.
    EXPECT_DOUBLE_EQ(f.before * f.after_shard * f.after, static_cast<double>(r.world));
  }
}

TEST(CommunicatorSplit, GroupsFollowTheColorsInWorldOrder) {
  // A (2 replicas, 2-way shard) mesh: shard groups by rank / 2, replica groups by rank % 2.
  const std::vector<int64_t> shard_colors = {0, 0, 1, 1};
  const std::vector<int64_t> replica_colors = {0, 1, 0, 1};
  const comm::SplitGroup s3 = comm::split_group(shard_colors, 3, 0);
  EXPECT_EQ(s3.color, 1);
  EXPECT_EQ(s3.rank, 1);
  EXPECT_EQ(s3.size, 2);
  const comm::SplitGroup r2 = comm::split_group(replica_colors, 2, 1);
  EXPECT_EQ(r2.color, 0);
  EXPECT_EQ(r2.rank, 1);
  EXPECT_EQ(r2.size, 2);
  EXPECT_EQ(r2.number, 1);
}

}  // namespace
}  // namespace ddpbench::modes::zero
