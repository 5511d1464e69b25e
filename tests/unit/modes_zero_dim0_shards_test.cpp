// modes_zero_dim0_shards_test.cpp — zero stage 3's parameter shards (modes/zero/dim0_shards.h) on
// 3 ranks as threads over gloo: each rank's parameters hold torch.chunk's dim-0 piece of theirs,
// padded with zero rows (a parameter with fewer rows than ranks, and a 0-dim one, included); a
// gather gives back every full value bit for bit and a release the shards; the reduce-scatter
// leaves each rank its chunk of the ranks' averaged gradients; each unit is gathered by an
// all-gather of its own; the gather fault's stale values keep only this rank's own rows fresh.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "modes/zero/dim0_shards.h"
#include "support/thread_world.h"

namespace ddpbench::modes::zero {
namespace {

constexpr int kWorld = 3;
// 7 rows (chunks 3, 3, 1), 2 rows (2 ranks hold a row, the third only padding), 0-dim, 6 rows.
const std::vector<std::vector<int64_t>> kDim0Shapes = {{7, 5}, {2}, {}, {6, 2, 2}};

std::vector<at::Tensor> make_dim0_parameters(double offset) {
  std::vector<at::Tensor> out;
  for (const auto& shape : kDim0Shapes) {
    at::Tensor t = at::arange(static_cast<int64_t>(c10::multiply_integers(shape)), at::kDouble);
    out.push_back((t + offset).reshape(shape).requires_grad_(true));
  }
  return out;
}

// torch.chunk's piece `rank` of `full` on dim 0, padded with zero rows to ceil(rows / K).
at::Tensor expected_chunk(const at::Tensor& full, int rank) {
  const at::Tensor rows = full.dim() == 0 ? full.reshape({1}) : full;
  const int64_t chunk = (rows.size(0) + kWorld - 1) / kWorld;
  std::vector<int64_t> shape = rows.sizes().vec();
  shape.front() = chunk;
  at::Tensor out = at::zeros(shape, full.options());
  const std::vector<at::Tensor> pieces = rows.detach().chunk(kWorld, 0);
  if (static_cast<size_t>(rank) < pieces.size()) {
    out.narrow(0, 0, pieces[static_cast<size_t>(rank)].size(0))
        .copy_(pieces[static_cast<size_t>(rank)]);
  }
  return out;
}

TEST(Dim0Shards, EachRankHoldsItsPaddedChunkAndAGatherGivesTheWhole) {
  testing::run_ranks(kWorld, [](comm::Communicator& comm) {
    std::vector<at::Tensor> params = make_dim0_parameters(0);
    const std::vector<at::Tensor> whole = make_dim0_parameters(0);
    Dim0Shards shards(params, comm);
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(torch::equal(params[i], expected_chunk(whole[i], comm.rank())))
          << "rank " << comm.rank() << " parameter " << i;
    }
    EXPECT_EQ(shards.holds_rows(1), comm.rank() < 2);
    EXPECT_EQ(shards.holds_rows(2), comm.rank() == 0);
    shards.gather();
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(torch::equal(params[i], whole[i])) << "rank " << comm.rank() << " param " << i;
    }
    // A state loaded into the whole parameters is what the next release keeps.
    {
      torch::NoGradGuard no_grad;
      params[0].add_(100);
    }
    shards.recut();
    at::Tensor moved = whole[0].detach() + 100;
    EXPECT_TRUE(torch::equal(params[0], expected_chunk(moved, comm.rank())));
  });
}

TEST(Dim0Shards, TheReduceScatterLeavesEachRankItsChunkOfTheAverage) {
  testing::run_ranks(kWorld, [](comm::Communicator& comm) {
    std::vector<at::Tensor> params = make_dim0_parameters(0);
    Dim0Shards shards(params, comm);
    // Rank r's gradients: the parameter values + 10 r, integers, so every sum is exact.
    std::vector<at::Tensor> grads = make_dim0_parameters(10.0 * comm.rank());
    grads[1] = at::Tensor();  // no gradient on any rank: zeros
    DivideFactors half;       // one replica: the product with 1/2 before the sum
    half.before = 2;
    at::Tensor flat;
    const std::vector<at::Tensor> mine = shards.reduce_scatter(grads, half, &flat);
    for (size_t i = 0; i < params.size(); ++i) {
      const at::Tensor full = i == 1 ? at::zeros(kDim0Shapes[i], at::kDouble)
                                     : (make_dim0_parameters(10.0).at(i).detach() * 0.5 * kWorld);
      EXPECT_TRUE(torch::equal(mine[i], expected_chunk(full, comm.rank())))
          << "rank " << comm.rank() << " parameter " << i << "\n"
          << mine[i] << "\n"
          << expected_chunk(full, comm.rank());
    }
    // And an all-gather of those chunks gives the averaged whole back.
    const std::vector<at::Tensor> back = shards.gather_full(mine);
    EXPECT_TRUE(torch::equal(back[0], make_dim0_parameters(10.0).at(0).detach() * 0.5 * kWorld));
  });
}

// A bucket's reduce-scatter (some parameters, in backward's order, as stage 3 starts it during
// backward) leaves each rank the same chunks as the whole model's; an undefined gradient is zeros.
TEST(Dim0Shards, ABucketsReduceScatterLeavesTheSameChunksAsTheWholeModels) {
  testing::run_ranks(kWorld, [](comm::Communicator& comm) {
    std::vector<at::Tensor> params = make_dim0_parameters(0);
    Dim0Shards shards(params, comm);
    std::vector<at::Tensor> grads = make_dim0_parameters(10.0 * comm.rank());
    grads[2] = at::Tensor();
    DivideFactors sum;  // 1/1 before the sum: integer sums, exact in any order
    sum.before = 1;
    Dim0Shards::PendingScatter pending = shards.start_reduce_scatter({3, 2, 0}, grads, sum);
    pending.scatter.work->wait();
    const std::vector<at::Tensor> bucket = shards.chunks(pending, pending.scatter.owned_block());
    ASSERT_EQ(bucket.size(), 3u);
    EXPECT_EQ(pending.scatter.owned_block().storage().nbytes(),
              static_cast<size_t>(pending.scatter.block.numel()) * sizeof(double));
    at::Tensor flat;
    const std::vector<at::Tensor> whole = shards.reduce_scatter(grads, sum, &flat);
    const size_t order[] = {3, 2, 0};
    for (size_t j = 0; j < 3; ++j) {
      EXPECT_TRUE(torch::equal(bucket[j], whole[order[j]]))
          << "rank " << comm.rank() << " parameter " << order[j];
    }
    EXPECT_TRUE(torch::equal(bucket[1], at::zeros_like(bucket[1])));
  });
}

// Units (stage 3's prefetch, unit_gathers.h): one all-gather each, of its own parameters only,
// finished in any order; an empty unit sends nothing; the shards at rest are the same whatever the
// layout; some parameters can go back to their shards while the others stay whole.
TEST(Dim0Shards, EachUnitIsGatheredByItsOwnAllGather) {
  testing::run_ranks(kWorld, [](comm::Communicator& comm) {
    std::vector<at::Tensor> params = make_dim0_parameters(0);
    const std::vector<at::Tensor> whole = make_dim0_parameters(0);
    // Unit 0 holds nothing (a root whose parameters all lie in blocks); units 1 and 2 interleave.
    Dim0Shards shards(params, comm, {2, 1, 2, 1});
    ASSERT_EQ(shards.units(), 3);
    EXPECT_EQ(shards.unit_parameters(2), (std::vector<int64_t>{0, 2}));
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_TRUE(torch::equal(params[i], expected_chunk(whole[i], comm.rank()))) << i;
    }
    const int64_t before = comm.collectives_issued();
    std::vector<Dim0Shards::PendingGather> pending;
    for (int64_t u = 0; u < shards.units(); ++u) pending.push_back(shards.start_gather(u));
    EXPECT_EQ(comm.collectives_issued() - before, 2) << "the empty unit sends nothing";
    shards.finish_gather(pending[2], nullptr);
    EXPECT_TRUE(torch::equal(params[0], whole[0]));
    EXPECT_TRUE(torch::equal(params[2], whole[2]));
    EXPECT_TRUE(torch::equal(params[1], expected_chunk(whole[1], comm.rank())))
        << "unit 1's parameter is still its shard";
    EXPECT_FALSE(shards.gathered());
    shards.finish_gather(pending[0], nullptr);
    shards.finish_gather(pending[1], nullptr);
    EXPECT_TRUE(shards.gathered());
    for (size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(torch::equal(params[i], whole[i])) << i;
    // A bucket's parameters freed during backward: back to their shards, the others still whole.
    shards.release({3});
    EXPECT_TRUE(torch::equal(params[3], expected_chunk(whole[3], comm.rank())));
    EXPECT_TRUE(torch::equal(params[0], whole[0]));
    EXPECT_FALSE(shards.gathered());
    shards.release();
    EXPECT_TRUE(torch::equal(params[0], expected_chunk(whole[0], comm.rank())));
  });
}

TEST(Dim0Shards, AStaleGatherKeepsOnlyThisRanksOwnRowsFresh) {
  testing::run_ranks(kWorld, [](comm::Communicator& comm) {
    std::vector<at::Tensor> params = make_dim0_parameters(0);
    Dim0Shards shards(params, comm);
    std::vector<at::Tensor> stale;
    for (const at::Tensor& p : make_dim0_parameters(-1000)) stale.push_back(p.detach());
    shards.gather(&stale);
    const at::Tensor got = params[0].detach();  // rows 0-2, 3-5, 6 are ranks 0, 1, 2's
    const int64_t first = 3 * comm.rank();
    const int64_t n = std::min<int64_t>(3, 7 - first);
    EXPECT_TRUE(torch::equal(got.narrow(0, first, n),
                             make_dim0_parameters(0).at(0).detach().narrow(0, first, n)));
    EXPECT_EQ(got.lt(0).sum().item<int64_t>(), (7 - n) * 5)
        << "the others' rows are the stale ones";
  });
}

}  // namespace
}  // namespace ddpbench::modes::zero
