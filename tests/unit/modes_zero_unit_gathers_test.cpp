// modes_zero_unit_gathers_test.cpp — zero stage 3's per-unit gathers (modes/zero/unit_gathers.h)
// on a tiny ResNet at 2 ranks as threads over gloo: the root's parameters (conv1, bn1, fc) and
// each block's form the units, in the forward's order; before the forward only the root's
// parameters are whole, each block's become whole as the forward enters it, the forward computes
// what the unsharded model's does, bit for bit, and the gather fault reaches every unit.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "modes/zero/unit_gathers.h"
#include "scenarios/models/resnet.h"
#include "scenarios/models/shard_units.h"
#include "support/thread_world.h"

namespace ddpbench::modes::zero {
namespace {

using scenarios::models::ResNet;

TEST(UnitGathers, ResNetsBlocksAreGatheredAsTheForwardEntersThem) {
  EXPECT_EQ(scenarios::models::shard_unit_paths(
                *ResNet(scenarios::models::tiny_resnet_shape(), 10).ptr()),
            (std::vector<std::string>{"layer1.0", "layer2.0", "layer3.0", "layer4.0"}));
  // Drawn once, outside the rank threads: every rank's model and input are copies of these.
  torch::manual_seed(0);
  ResNet base(scenarios::models::tiny_resnet_shape(), 10);
  base->to(at::kDouble);
  const at::Tensor x = at::randn({4, 3, 32, 32}, at::kDouble);
  const auto copy = [&base] {
    return ResNet(std::dynamic_pointer_cast<scenarios::models::ResNetImpl>(base->clone()));
  };
  testing::run_ranks(2, [&](comm::Communicator& comm) {
    ResNet model = copy();
    ResNet plain = copy();
    std::vector<at::Tensor> params;
    std::vector<std::string> names;
    for (const auto& p : model->named_parameters()) {
      params.push_back(p.value());
      names.push_back(p.key());
    }
    const ParameterUnits units = parameter_units(*model, names);
    for (size_t i = 0; i < names.size(); ++i) {
      const int64_t expected = names[i].rfind("layer", 0) == 0 ? names[i][5] - '0' : 0;
      EXPECT_EQ(units.unit_of[i], expected) << names[i];
    }
    Dim0Shards shards(params, comm, units.unit_of);
    const auto whole = [&](const std::string& name) {
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] == name) return params[i].sizes() == plain->named_parameters()[name].sizes();
      }
      return false;
    };
    std::vector<int64_t> order;
    std::vector<bool> next_block_was_shard;
    UnitGathers gathers(shards, *model, units.listener_unit, [&](int64_t unit) {
      order.push_back(unit);
      // When a block is gathered, the next block is still a shard: gathered as entered.
      if (unit == 2) next_block_was_shard.push_back(!whole("layer3.0.conv1.weight"));
    });
    gathers.begin(nullptr);
    EXPECT_TRUE(whole("conv1.weight"));
    EXPECT_TRUE(whole("fc.weight"));
    EXPECT_FALSE(whole("layer1.0.conv1.weight")) << "a block waits for the forward to enter it";
    const at::Tensor out = model->forward(x);
    gathers.finish();
    EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(next_block_was_shard, std::vector<bool>{true});
    EXPECT_TRUE(shards.gathered());
    EXPECT_TRUE(torch::equal(out, plain->forward(x)));
    // The gather fault: every unit's gather, a block's included, keeps the others' rows stale.
    std::vector<at::Tensor> stale;  // full-sized, taken while the parameters are
    for (const at::Tensor& p : params) stale.push_back(at::full_like(p, -7.0));
    shards.release();
    gathers.begin(&stale);
    model->forward(x);
    gathers.finish();
    for (const char* name : {"conv1.weight", "layer4.0.conv2.weight"}) {
      const at::Tensor rows = model->named_parameters()[name].detach();
      const int64_t half = rows.size(0) / 2;
      EXPECT_TRUE(torch::equal(rows.narrow(0, comm.rank() * half, half),
                               plain->named_parameters()[name].narrow(0, comm.rank() * half, half)))
          << name << ": this rank's own rows are fresh";
      EXPECT_TRUE(rows.narrow(0, (1 - comm.rank()) * half, half).eq(-7.0).all().item<bool>())
          << name << ": the other rank's are stale";
    }
    // Out of a gather (an evaluation forward, a gathered state), entering a block does nothing.
    shards.release();
    shards.gather();
    EXPECT_TRUE(torch::equal(model->forward(x), plain->forward(x)));
    EXPECT_EQ(order.size(), 10u);
  });
}

}  // namespace
}  // namespace ddpbench::modes::zero
