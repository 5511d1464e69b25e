// modes_sync_bn_test.cpp — SyncBN against BatchNorm on the concatenated input, with uneven local
// batch sizes per rank (as PyTorch's SyncBatchNorm_Diff_Input_Sizes tests): outputs, input
// gradients, weight/bias gradients (summed over ranks, as DDP's reduction would) and running
// statistics; eval mode sends no collective; the skip-exchange fault really changes the result.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <mutex>

#include "modes/sync_bn/sync_batch_norm.h"
#include "scenarios/models/batch_norm.h"
#include "support/thread_world.h"

namespace ddpbench::modes::sync_bn {
namespace {

using scenarios::models::BatchNorm2d;

constexpr int64_t kChannels = 3;

// Rank r's input: distinct per rank and element (so a misplaced slice cannot pass).
at::Tensor rank_input(int64_t rank, int64_t batch) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(100 + rank);
  return (at::randn({batch, kChannels, 4, 5}, gen) * (1.0 + rank) + rank).to(at::kDouble);
}

at::Tensor upstream_grad(const at::Tensor& y, int64_t rank) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(200 + rank);
  return at::randn(y.sizes(), gen).to(at::kDouble);
}

BatchNorm2d make_bn() {
  BatchNorm2d bn(kChannels);
  bn->to(torch::kDouble);
  torch::NoGradGuard no_grad;
  bn->weight.copy_(torch::tensor({1.5, -0.5, 2.0}, torch::kDouble));
  bn->bias.copy_(torch::tensor({0.1, 0.2, -0.3}, torch::kDouble));
  return bn;
}

struct RankOutcome {
  at::Tensor x, y, dx, dweight, dbias, running_mean, running_var;
};

TEST(SyncBatchNorm, UnevenLocalBatchesEqualBatchNormOnTheConcatenation) {
  const std::vector<int64_t> sizes = {2, 5, 3};
  std::vector<RankOutcome> outcome(sizes.size());
  std::mutex mu;
  testing::run_ranks(static_cast<int>(sizes.size()), [&](comm::Communicator& comm) {
    const int64_t r = comm.rank();
    BatchNorm2d bn = make_bn();
    ASSERT_EQ(convert_sync_batchnorm(*bn, comm, std::make_shared<SyncBnControl>()), 0)
        << "the root module is not a child: convert via a parent";
    // Convert through a parent, as for real models.
    torch::nn::Sequential parent(bn);
    ASSERT_EQ(convert_sync_batchnorm(*parent, comm, std::make_shared<SyncBnControl>()), 1);
    bn->train();
    at::Tensor x = rank_input(r, sizes[static_cast<size_t>(r)]).requires_grad_(true);
    const at::Tensor y = bn(x);
    y.backward(upstream_grad(y, r));
    std::lock_guard<std::mutex> lock(mu);
    outcome[static_cast<size_t>(r)] = {x.detach(),
                                       y.detach(),
                                       x.grad(),
                                       bn->weight.grad(),
                                       bn->bias.grad(),
                                       bn->running_mean.clone(),
                                       bn->running_var.clone()};
  });

  // Reference: plain BatchNorm on the concatenated batch, same upstream gradients.
  BatchNorm2d ref = make_bn();
  ref->train();
  std::vector<at::Tensor> xs, dys;
  for (size_t r = 0; r < sizes.size(); ++r) {
    xs.push_back(outcome[r].x);
    dys.push_back(upstream_grad(outcome[r].y, static_cast<int64_t>(r)));
  }
  at::Tensor x = at::cat(xs).requires_grad_(true);
  const at::Tensor y = ref(x);
  y.backward(at::cat(dys));

  int64_t offset = 0;
  at::Tensor dweight = at::zeros({kChannels}, at::kDouble);
  at::Tensor dbias = at::zeros({kChannels}, at::kDouble);
  for (size_t r = 0; r < sizes.size(); ++r) {
    const auto& o = outcome[r];
    const int64_t n = sizes[r];
    EXPECT_TRUE(at::allclose(o.y, y.detach().narrow(0, offset, n), 1e-12, 1e-12))
        << "output rank " << r;
    EXPECT_TRUE(at::allclose(o.dx, x.grad().narrow(0, offset, n), 1e-12, 1e-12)) << "dx rank " << r;
    EXPECT_TRUE(at::allclose(o.running_mean, ref->running_mean, 1e-12, 1e-12)) << "mean rank " << r;
    EXPECT_TRUE(at::allclose(o.running_var, ref->running_var, 1e-12, 1e-12)) << "var rank " << r;
    dweight += o.dweight;
    dbias += o.dbias;
    offset += n;
  }
  EXPECT_TRUE(at::allclose(dweight, ref->weight.grad(), 1e-12, 1e-12));
  EXPECT_TRUE(at::allclose(dbias, ref->bias.grad(), 1e-12, 1e-12));
}

TEST(SyncBatchNorm, EvalModeSendsNoCollective) {
  testing::run_ranks(2, [&](comm::Communicator& comm) {
    BatchNorm2d bn = make_bn();
    torch::nn::Sequential parent(bn);
    convert_sync_batchnorm(*parent, comm, std::make_shared<SyncBnControl>());
    bn->eval();
    const int64_t before = comm.collectives_issued();
    const at::Tensor y = bn(rank_input(comm.rank(), 4));
    EXPECT_EQ(comm.collectives_issued(), before);
    // Eval normalises with the running statistics (0 and 1 initially).
    EXPECT_TRUE(at::allclose(
        y, rank_input(comm.rank(), 4) * bn->weight.view({1, -1, 1, 1}) / std::sqrt(1 + 1e-5) +
               bn->bias.view({1, -1, 1, 1})));
    bn->train();
    bn(rank_input(comm.rank(), 4));
    EXPECT_GT(comm.collectives_issued(), before) << "training mode must communicate";
  });
}

TEST(SyncBatchNorm, SkippedExchangeUsesLocalStatistics) {
  std::vector<at::Tensor> means(2);
  testing::run_ranks(2, [&](comm::Communicator& comm) {
    BatchNorm2d bn = make_bn();
    torch::nn::Sequential parent(bn);
    auto control = std::make_shared<SyncBnControl>();
    control->skip_exchange = comm.rank() == 1;
    convert_sync_batchnorm(*parent, comm, control);
    bn->train();
    bn(rank_input(comm.rank(), 4)).sum().backward();
    means[static_cast<size_t>(comm.rank())] = bn->running_mean.clone();
  });
  EXPECT_FALSE(at::allclose(means[0], means[1])) << "the fault must make rank 1 diverge";
}

}  // namespace
}  // namespace ddpbench::modes::sync_bn
