// modes_zero_sharded_optimizer_test.cpp — ZeRO stage 1's optimizer step (modes/zero/
// sharded_optimizer.h: an optimizer over the owned parameters, then the owners' broadcasts) on 2
// and 3 ranks as threads over gloo: with the same averaged gradients on every rank, every rank
// ends each step holding exactly what one plain optimizer over the whole model computes (SGD with
// momentum, nesterov and weight decay; Adam), while each rank keeps only its own parameters'
// optimizer state: the ranks' state bytes add up to the plain optimizer's. The same with the
// parameters packed by owner (pack_by_owner: views of one flat buffer per rank, broadcast as such).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <mutex>

#include "modes/zero/sharded_optimizer.h"
#include "scenarios/optim/optimizer_state.h"
#include "scenarios/training_recipe.h"
#include "support/thread_world.h"

namespace ddpbench::modes::zero {
namespace {

// A small model's parameter shapes, with ties in size (the partition's stable order matters).
const std::vector<std::vector<int64_t>> kShapes = {{64, 32},     {64}, {10, 64}, {10},
                                                   {8, 3, 3, 3}, {8},  {8}};

std::vector<at::Tensor> make_parameters(uint64_t seed) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<at::Tensor> out;
  for (const auto& shape : kShapes) out.push_back(at::randn(shape, gen).requires_grad_(true));
  return out;
}

// The gradients of step `step`, the same on every rank (as after DDP's average).
void set_gradients(const std::vector<at::Tensor>& parameters, int64_t step) {
  at::Generator gen = at::detail::createCPUGenerator(1000 + static_cast<uint64_t>(step));
  for (const at::Tensor& p : parameters) {
    const_cast<at::Tensor&>(p).mutable_grad() = at::randn(p.sizes(), gen);
  }
}

void expect_plain_steps(int world, const scenarios::OptimizerSpec& spec, bool packed) {
  std::mutex mutex;
  std::vector<int64_t> rank_bytes(static_cast<size_t>(world), 0);
  int64_t plain_bytes = 0;
  testing::run_ranks(world, [&](comm::Communicator& comm) {
    const std::vector<at::Tensor> sharded = make_parameters(7);
    const std::vector<at::Tensor> plain = make_parameters(7);
    const ZeroPartition partition = partition_of(sharded, comm.world_size());
    const std::vector<at::Tensor> flats =
        packed ? pack_by_owner(sharded, partition) : std::vector<at::Tensor>{};
    if (packed) {
      ASSERT_EQ(flats.size(), static_cast<size_t>(comm.world_size()));
      for (size_t i = 0; i < sharded.size(); ++i) {
        ASSERT_TRUE(torch::equal(sharded[i], plain[i])) << "packing changed parameter " << i;
        const at::Tensor& flat = flats[static_cast<size_t>(partition.owner[i])];
        EXPECT_TRUE(sharded[i].is_alias_of(flat)) << "parameter " << i << " is not in its flat";
      }
    }
    auto local = scenarios::make_optimizer(spec, owned_parameters(sharded, partition, comm.rank()));
    auto reference = scenarios::make_optimizer(spec, plain);
    for (int64_t step = 0; step < 3; ++step) {
      set_gradients(sharded, step);
      set_gradients(plain, step);
      local->step();
      broadcast_from_owners(sharded, partition, comm, flats);
      reference->step();
      for (size_t i = 0; i < plain.size(); ++i) {
        ASSERT_TRUE(torch::equal(sharded[i], plain[i]))
            << "rank " << comm.rank() << " parameter " << i << " step " << step;
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    rank_bytes[static_cast<size_t>(comm.rank())] = scenarios::state_bytes(*local);
    if (comm.rank() == 0) plain_bytes = scenarios::state_bytes(*reference);
  });
  int64_t sum = 0;
  for (const int64_t b : rank_bytes) {
    EXPECT_GT(b, 0) << "a rank without state";
    EXPECT_LT(b, plain_bytes) << "a rank holds the whole state";
    sum += b;
  }
  EXPECT_EQ(sum, plain_bytes);
}

TEST(ShardedStep, SgdWithMomentumEqualsOnePlainOptimizerAtWorldTwoAndThree) {
  const scenarios::OptimizerSpec sgd{/*lr=*/0.05, /*momentum=*/0.9, /*dampening=*/0.0,
                                     /*weight_decay=*/1e-3, /*nesterov=*/true};
  for (const int world : {2, 3}) {
    for (const bool packed : {false, true}) expect_plain_steps(world, sgd, packed);
  }
}

TEST(ShardedStep, AdamEqualsOnePlainOptimizerAtWorldTwoAndThree) {
  scenarios::OptimizerSpec adam;
  adam.kind = scenarios::OptimizerKind::kAdam;
  adam.lr = 1e-3;
  adam.weight_decay = 1e-4;
  for (const int world : {2, 3}) {
    for (const bool packed : {false, true}) expect_plain_steps(world, adam, packed);
  }
}

// Without the owners' broadcasts the ranks would part: each would hold only its own parameters'
// updates. The check above would see it: a rank that steps nothing but its own shard differs.
TEST(ShardedStep, EachRankStepsOnlyTheParametersItOwns) {
  testing::run_ranks(2, [](comm::Communicator& comm) {
    const std::vector<at::Tensor> parameters = make_parameters(7);
    const ZeroPartition partition = partition_of(parameters, comm.world_size());
    auto local = scenarios::make_optimizer({/*lr=*/0.1},
                                           owned_parameters(parameters, partition, comm.rank()));
    const auto& mine = partition.rank_params[static_cast<size_t>(comm.rank())];
    EXPECT_EQ(local->param_groups().at(0).params().size(), mine.size());
    std::vector<at::Tensor> before;
    for (const at::Tensor& p : parameters) before.push_back(p.detach().clone());
    set_gradients(parameters, 0);
    local->step();  // the local step alone, no broadcast
    for (size_t i = 0; i < parameters.size(); ++i) {
      const bool owned = partition.owner[i] == static_cast<int64_t>(comm.rank());
      EXPECT_EQ(!torch::equal(parameters[i], before[i]), owned) << "parameter " << i;
    }
  });
}

}  // namespace
}  // namespace ddpbench::modes::zero
