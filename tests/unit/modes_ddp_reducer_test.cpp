// modes_ddp_reducer_test.cpp — the DDP engine on real gloo ranks (threads): averaged gradients
// equal single-device gradients of the global batch, buckets launch during backward, hooks fire
// last layer first, naive == bucketed, no_sync accumulation, unused parameters, compression
// hooks, the fault tap, and the construction-time broadcast.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "modes/common/zero_gradients.h"
#include "modes/ddp/distributed_model.h"
#include "support/thread_world.h"

namespace ddpbench::modes::ddp {
namespace {

constexpr int kWorld = 2;
constexpr int64_t kLocal = 4;

// Three Linear layers: parameters 0..5 are l1.weight, l1.bias, ..., l3.bias.
struct MlpImpl : torch::nn::Module {
  MlpImpl() {
    l1 = register_module("l1", torch::nn::Linear(4, 8));
    l2 = register_module("l2", torch::nn::Linear(8, 8));
    l3 = register_module("l3", torch::nn::Linear(8, 3));
    to(torch::kDouble);
  }
  at::Tensor forward(at::Tensor x) { return l3(torch::relu(l2(torch::relu(l1(x))))); }
  torch::nn::Linear l1{nullptr}, l2{nullptr}, l3{nullptr};
};
TORCH_MODULE(Mlp);

// Ranks are threads here and seeding is process-global: build models one at a time.
std::mutex& init_mutex() {
  static std::mutex mu;
  return mu;
}

Mlp make_mlp(uint64_t seed) {
  std::lock_guard<std::mutex> lock(init_mutex());
  torch::manual_seed(seed);
  return Mlp();
}

struct Data {
  at::Tensor x, y;  // global batch, rank r owns rows [r*kLocal, (r+1)*kLocal)
};

Data make_data(uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return {at::randn({kWorld * kLocal, 4}, gen).to(at::kDouble),
          at::randn({kWorld * kLocal, 3}, gen).to(at::kDouble)};
}

at::Tensor local(const at::Tensor& t, int rank) { return t.narrow(0, rank * kLocal, kLocal); }

std::vector<at::Tensor> single_grads(const Data& d, uint64_t seed) {
  auto m = make_mlp(seed);
  torch::mse_loss(m->forward(d.x), d.y).backward();
  std::vector<at::Tensor> g;
  for (const auto& p : m->parameters()) g.push_back(p.grad().clone());
  return g;
}

double max_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, (a[i] - b[i]).abs().max().item<double>());
  return worst;
}

DdpOptions small_buckets(DdpImpl impl = DdpImpl::kBucketed) {
  DdpOptions o;
  o.impl = impl;
  o.reducer.limits = {64, 128};  // bytes: forces several buckets on the small MLP
  return o;
}

// Runs one DDP step on every rank; returns rank 0's gradients and reducer observations.
struct StepResult {
  std::vector<at::Tensor> grads;
  std::vector<int64_t> ready_order;
  int64_t buckets = 0;
  int64_t launched_in_backward = 0;
  int64_t bytes = 0;
};

// `steps` > 1 repeats the step on the same batch, without an optimizer (the buckets are rebuilt
// before the second, as PyTorch's are).
StepResult ddp_step(const Data& d, const DdpOptions& options, uint64_t seed, int steps = 1) {
  StepResult out;
  std::mutex mu;
  testing::run_ranks(kWorld, [&](comm::Communicator& comm) {
    DistributedModel model(torch::nn::AnyModule(make_mlp(seed)), comm, options);
    for (int step = 0; step < steps; ++step) {
      for (auto& p : model.module().parameters()) {
        if (p.grad().defined()) p.mutable_grad().zero_();
      }
      torch::mse_loss(model.forward(local(d.x, comm.rank())), local(d.y, comm.rank())).backward();
      model.reduce_gradients();
    }
    if (comm.rank() != 0) return;
    std::lock_guard<std::mutex> lock(mu);
    for (const auto& p : model.module().parameters()) out.grads.push_back(p.grad().clone());
    out.bytes = model.bytes_last_step();
    if (const Reducer* r = model.reducer()) {
      out.ready_order = r->ready_order();
      out.buckets = static_cast<int64_t>(r->buckets().size());
      out.launched_in_backward = r->buckets_launched_during_backward();
    }
  });
  return out;
}

TEST(DdpReducer, AveragedGradientsEqualSingleDeviceGradientsOfTheGlobalBatch) {
  const Data d = make_data(1);
  const StepResult r = ddp_step(d, small_buckets(), 7);
  EXPECT_LT(max_diff(r.grads, single_grads(d, 7)), 1e-14);
}

TEST(DdpReducer, OneBucketFirstThenRebuiltBucketsLaunchDuringBackwardLastLayerFirst) {
  const StepResult step0 = ddp_step(make_data(2), small_buckets(), 7);
  EXPECT_EQ(step0.buckets, 1) << "PyTorch's first iteration reduces everything in one bucket";
  const StepResult r = ddp_step(make_data(2), small_buckets(), 7, 2);
  EXPECT_LT(max_diff(r.grads, single_grads(make_data(2), 7)), 1e-14);
  ASSERT_GE(r.buckets, 3);
  EXPECT_EQ(r.launched_in_backward, r.buckets) << "every bucket should start before backward ends";
  ASSERT_EQ(r.ready_order.size(), 6u);
  // Parameters 4, 5 (last Linear) are ready before 0, 1 (first Linear).
  const std::set<int64_t> first(r.ready_order.begin(), r.ready_order.begin() + 2);
  const std::set<int64_t> last(r.ready_order.end() - 2, r.ready_order.end());
  EXPECT_EQ(first, (std::set<int64_t>{4, 5}));
  EXPECT_EQ(last, (std::set<int64_t>{0, 1}));
}

// No copy into the buckets or back: each .grad is a view of its bucket, in every step, whether
// the optimizer zeroed it in place (torch 1.13) or set it to None (2.x), and whatever a user put
// there meanwhile is kept.
TEST(DdpReducer, GradientsAreViewsOfTheirBucketInEveryStep) {
  const Data d = make_data(12);
  testing::run_ranks(kWorld, [&](comm::Communicator& comm) {
    Mlp m = make_mlp(13);
    DistributedModel model(torch::nn::AnyModule(m), comm, small_buckets());
    torch::optim::SGD sgd(m->parameters(), torch::optim::SGDOptions(0.0));
    const std::vector<at::Tensor> params = m->parameters();
    const std::vector<at::Tensor> want = single_grads(d, 13);
    for (int step = 0; step < 3; ++step) {
      zero_gradients(sgd);
      if (step == 2) params[0].mutable_grad() = at::zeros_like(params[0]);  // a user's own
      torch::mse_loss(model.forward(local(d.x, comm.rank())), local(d.y, comm.rank())).backward();
      model.reduce_gradients();
      std::vector<at::Tensor> got;
      for (const auto& p : params) got.push_back(p.grad());
      EXPECT_LT(max_diff(got, want), 1e-14) << "step " << step;  // lr 0: the same gradients
      for (const auto& bucket : model.reducer()->buckets()) {
        const at::Tensor& first = params[static_cast<size_t>(bucket.front())].grad();
        int64_t offset = 0;
        for (int64_t i : bucket) {
          const at::Tensor& g = params[static_cast<size_t>(i)].grad();
          EXPECT_TRUE(g.is_alias_of(first)) << "step " << step << ", parameter " << i;
          EXPECT_EQ(g.storage_offset(), first.storage_offset() + offset) << "parameter " << i;
          offset += g.numel();
        }
      }
    }
  });
}

// PyTorch's Join: rank 0 has run out of batches and only shadows; rank 1 trains. Every reducer
// variant must complete (no hang: the collectives match in number and order), and both ranks end
// with rank 1's gradient over the initial world size (divide_by_initial_world_size), as
// gradients of half the MSE of rank 1's rows.
TEST(DdpReducer, AJoinedRankShadowsWithZerosAndTheAverageStaysOverTheWorldSize) {
  const Data d = make_data(14);
  auto m = make_mlp(15);
  (torch::mse_loss(m->forward(local(d.x, 1)), local(d.y, 1)) / kWorld).backward();
  std::vector<at::Tensor> want;
  for (const auto& p : m->parameters()) want.push_back(p.grad());
  DdpOptions unused = small_buckets();
  unused.reducer.find_unused_parameters = true;
  for (const DdpOptions& options : {small_buckets(), small_buckets(DdpImpl::kNaive), unused}) {
    testing::run_ranks(kWorld, [&](comm::Communicator& comm) {
      DistributedModel model(torch::nn::AnyModule(make_mlp(15)), comm, options);
      for (int step = 0; step < 2; ++step) {  // a second step: the joined rank's .grad is reused
        for (auto& p : model.module().parameters()) {
          if (p.grad().defined()) p.mutable_grad().zero_();
        }
        if (comm.rank() == 0) {
          model.reduce_gradients_joined();
        } else {
          torch::mse_loss(model.forward(local(d.x, 1)), local(d.y, 1)).backward();
          model.reduce_gradients();
        }
        std::vector<at::Tensor> got;
        for (const auto& p : model.module().parameters()) got.push_back(p.grad());
        EXPECT_LT(max_diff(got, want), 1e-14) << "rank " << comm.rank() << " step " << step;
      }
    });
  }
}

TEST(DdpReducer, NaiveEqualsBucketed) {
  const Data d = make_data(3);
  const StepResult bucketed = ddp_step(d, small_buckets(), 9);
  const StepResult naive = ddp_step(d, small_buckets(DdpImpl::kNaive), 9);
  // Dividing by 2 is exact, so the order of sum and division cannot matter: bit-identical.
  for (size_t i = 0; i < bucketed.grads.size(); ++i) {
    EXPECT_TRUE(at::equal(bucketed.grads[i], naive.grads[i])) << "parameter " << i;
  }
  EXPECT_EQ(bucketed.bytes, naive.bytes);
}

TEST(DdpReducer, NoSyncAccumulatesLocallyThenReducesTheSum) {
  const Data a = make_data(4);
  const Data b = make_data(5);
  std::vector<at::Tensor> got;
  testing::run_ranks(kWorld, [&](comm::Communicator& comm) {
    DistributedModel model(torch::nn::AnyModule(make_mlp(11)), comm, small_buckets());
    const int r = comm.rank();
    {
      DistributedModel::NoSync guard(model);
      torch::mse_loss(model.forward(local(a.x, r)), local(a.y, r)).backward();
      const int64_t before = comm.collectives_issued();
      model.reduce_gradients();
      EXPECT_EQ(comm.collectives_issued(), before) << "no_sync must not communicate";
    }
    torch::mse_loss(model.forward(local(b.x, r)), local(b.y, r)).backward();
    model.reduce_gradients();
    if (r == 0) {
      for (const auto& p : model.module().parameters()) got.push_back(p.grad().clone());
    }
  });
  auto m = make_mlp(11);
  (torch::mse_loss(m->forward(a.x), a.y) + torch::mse_loss(m->forward(b.x), b.y)).backward();
  std::vector<at::Tensor> want;
  for (const auto& p : m->parameters()) want.push_back(p.grad());
  EXPECT_LT(max_diff(got, want), 1e-14);
}

// Head `b` is never used; head `c` only on rank 1.
struct TwoHeadsImpl : torch::nn::Module {
  TwoHeadsImpl() {
    a = register_module("a", torch::nn::Linear(4, 3));
    b = register_module("b", torch::nn::Linear(4, 3));
    c = register_module("c", torch::nn::Linear(4, 3));
    to(torch::kDouble);
  }
  at::Tensor forward(at::Tensor x) { return use_c ? a(x) + c(x) : a(x); }
  torch::nn::Linear a{nullptr}, b{nullptr}, c{nullptr};
  bool use_c = false;
};
TORCH_MODULE(TwoHeads);

TwoHeads make_two_heads(int rank) {
  std::lock_guard<std::mutex> lock(init_mutex());
  torch::manual_seed(3);
  TwoHeads m;
  m->use_c = rank == 1;
  return m;
}

// Both strategies alike (the naive one used to zero-fill a gradient no rank computed, which
// PyTorch leaves None: weight decay and momentum then moved a parameter single-device training
// leaves alone).
TEST(DdpReducer, UnusedParametersNeedTheFlagAndAreAveragedAsZeros) {
  const Data d = make_data(6);
  for (const DdpImpl impl : {DdpImpl::kBucketed, DdpImpl::kNaive}) {
    const char* name = impl == DdpImpl::kNaive ? "naive" : "bucketed";
    testing::run_ranks(kWorld, [&](comm::Communicator& comm) {
      TwoHeads m = make_two_heads(comm.rank());
      DistributedModel model(torch::nn::AnyModule(m), comm, small_buckets(impl));
      model.forward(local(d.x, comm.rank())).sum().backward();
      try {
        model.reduce_gradients();
        ADD_FAILURE() << name << ": unused parameters must be an error without the flag";
      } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("b.weight"), std::string::npos) << name << e.what();
      }
    });
    testing::run_ranks(kWorld, [&](comm::Communicator& comm) {
      TwoHeads m = make_two_heads(comm.rank());
      DdpOptions o = small_buckets(impl);
      o.reducer.find_unused_parameters = true;
      DistributedModel model(torch::nn::AnyModule(m), comm, o);
      const at::Tensor x = local(d.x, comm.rank());
      model.forward(x).sum().backward();
      model.reduce_gradients();
      EXPECT_FALSE(m->b->weight.grad().defined()) << name << ": unused on every rank: None";
      EXPECT_FALSE(m->b->bias.grad().defined()) << name << ": unused on every rank: None";
      // c is used on rank 1 only: both ranks hold rank 1's gradient / 2.
      const at::Tensor x1 = local(d.x, 1);
      const at::Tensor want_c = x1.sum(0).unsqueeze(0).expand({3, 4}) / 2.0;
      ASSERT_TRUE(m->c->weight.grad().defined()) << name;
      EXPECT_LT((m->c->weight.grad() - want_c).abs().max().item<double>(), 1e-14) << name;
    });
  }
}

// A joined rank (no backward) under find_unused_parameters: a parameter no training rank used
// keeps None on every rank, the joined one included, in both strategies.
TEST(DdpReducer, AJoinedRankLeavesAParameterUnusedEverywhereNone) {
  const Data d = make_data(8);
  for (const DdpImpl impl : {DdpImpl::kBucketed, DdpImpl::kNaive}) {
    const char* name = impl == DdpImpl::kNaive ? "naive" : "bucketed";
    testing::run_ranks(kWorld, [&](comm::Communicator& comm) {
      TwoHeads m = make_two_heads(1);  // rank 1 uses heads a and c; b is unused everywhere
      DdpOptions o = small_buckets(impl);
      o.reducer.find_unused_parameters = true;
      DistributedModel model(torch::nn::AnyModule(m), comm, o);
      if (comm.rank() == 0) {
        model.reduce_gradients_joined();
      } else {
        model.forward(local(d.x, 1)).sum().backward();
        model.reduce_gradients();
      }
      EXPECT_FALSE(m->b->weight.grad().defined()) << name << " rank " << comm.rank();
      const at::Tensor want_c = local(d.x, 1).sum(0).unsqueeze(0).expand({3, 4}) / 2.0;
      ASSERT_TRUE(m->c->weight.grad().defined()) << name << " rank " << comm.rank();
      EXPECT_LT((m->c->weight.grad() - want_c).abs().max().item<double>(), 1e-14)
          << name << " rank " << comm.rank();
    });
  }
}

TEST(DdpReducer, Fp16CompressionHalvesTheBytesAndStaysClose) {
  const Data d = make_data(7);
  const StepResult plain = ddp_step(d, small_buckets(), 5);
  DdpOptions o = small_buckets();
  o.reducer.comm_hook = CommHookKind::kFp16Compress;
  const StepResult fp16 = ddp_step(d, o, 5);
  EXPECT_EQ(fp16.bytes * 4, plain.bytes) << "float64 buckets travel as float16";
  for (size_t i = 0; i < plain.grads.size(); ++i) {
    const double scale = plain.grads[i].abs().max().item<double>() + 1e-12;
    const double err = (fp16.grads[i] - plain.grads[i]).abs().max().item<double>() / scale;
    EXPECT_LT(err, 4e-3) << "parameter " << i;
  }
}

TEST(DdpReducer, GradientTapCorruptsOnlyItsRanksContribution) {
  const Data d = make_data(8);
  std::vector<at::Tensor> got;
  testing::run_ranks(kWorld, [&](comm::Communicator& comm) {
    DistributedModel model(torch::nn::AnyModule(make_mlp(5)), comm, small_buckets());
    if (comm.rank() == 1) {
      model.set_gradient_tap([](int64_t i, at::Tensor& slot) {
        if (i == 0) slot.mul_(1.0 + 1e-3);
      });
    }
    torch::mse_loss(model.forward(local(d.x, comm.rank())), local(d.y, comm.rank())).backward();
    model.reduce_gradients();
    if (comm.rank() == 0) {
      for (const auto& p : model.module().parameters()) got.push_back(p.grad().clone());
    }
  });
  const auto want = single_grads(d, 5);
  EXPECT_GT((got[0] - want[0]).abs().max().item<double>(), 1e-8) << "the tap had no effect";
  for (size_t i = 1; i < got.size(); ++i) {
    EXPECT_LT((got[i] - want[i]).abs().max().item<double>(), 1e-14) << "parameter " << i;
  }
}

TEST(DistributedModel, ConstructionBroadcastsRankZerosWeights) {
  testing::run_ranks(3, [&](comm::Communicator& comm) {
    // Every rank initialises differently; after construction all hold rank 0's weights.
    DistributedModel model(torch::nn::AnyModule(make_mlp(100 + comm.rank())), comm, DdpOptions{});
    const auto want = make_mlp(100)->parameters();
    const auto have = model.module().parameters();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(at::equal(have[i], want[i]));
  });
}

}  // namespace
}  // namespace ddpbench::modes::ddp
