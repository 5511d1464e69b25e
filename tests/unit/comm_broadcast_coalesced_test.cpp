// comm_broadcast_coalesced_test.cpp — many tensors of mixed dtypes and shapes arrive from the
// root intact, in one collective per dtype (not one per tensor).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "comm/broadcast_coalesced.h"
#include "support/thread_world.h"

namespace ddpbench::comm {
namespace {

std::vector<at::Tensor> tensors_of(int rank) {
  const double base = 100.0 * rank;
  return {at::arange(6, at::kFloat).view({2, 3}) + base,
          at::arange(4, at::kLong) + rank,
          at::arange(5, at::kDouble) + base,
          at::full({3}, base, at::kFloat),
          at::arange(8, at::kLong).view({2, 2, 2}) + rank,
          at::full({1}, base, at::kFloat)};
}

TEST(BroadcastCoalesced, EveryTensorArrivesInOneCollectivePerDtype) {
  testing::run_ranks(3, [](Communicator& comm) {
    std::vector<at::Tensor> mine = tensors_of(comm.rank());
    const int64_t before = comm.collectives_issued();
    broadcast_coalesced(comm, mine, 1);
    EXPECT_EQ(comm.collectives_issued() - before, 3) << "float, int64 and double: 3 messages";
    const std::vector<at::Tensor> want = tensors_of(1);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(at::equal(mine[i], want[i])) << "rank " << comm.rank() << ", tensor " << i;
    }
  });
}

}  // namespace
}  // namespace ddpbench::comm
