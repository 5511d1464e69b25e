// run_default_comparison_test.cpp — what a bare `ddpbench run` compares (Note [Default
// comparison]): every mode, on every usable GPU or on 2 CPU ranks; a request that names --modes
// or --gpus keeps its meaning.
#include <gtest/gtest.h>

#include "run/default_comparison.h"

namespace ddpbench::run {
namespace {

const std::vector<std::string> kEveryMode = {"single", "dp", "ddp"};

TEST(DefaultComparison, ABareRunComparesEveryModeOnTwoCpuRanksWithoutAGpu) {
  const requests::RunRequest r = with_default_comparison(requests::RunRequest{}, 0);
  EXPECT_EQ(r.modes, kEveryMode);
  EXPECT_EQ(r.world_size, kDefaultCpuRanks);
  EXPECT_EQ(kDefaultCpuRanks, 2);
  EXPECT_FALSE(r.world_size_given);
}

TEST(DefaultComparison, ABareRunUsesEveryVisibleGpuAndTheCpuWhenAskedTo) {
  EXPECT_EQ(with_default_comparison(requests::RunRequest{}, 8).world_size, 8);
  EXPECT_EQ(with_default_comparison(requests::RunRequest{}, 1).world_size, 1);
  requests::RunRequest cpu;
  cpu.device = requests::DeviceChoice::kCpu;
  EXPECT_EQ(with_default_comparison(cpu, 8).world_size, kDefaultCpuRanks);
  EXPECT_EQ(with_default_comparison(cpu, 8).modes, kEveryMode);
}

// The README's first command must reach its verdict in minutes on a 2-core machine.
TEST(DefaultComparison, ABareCpuRunTrainsAFewStepsUnlessTold) {
  EXPECT_EQ(with_default_comparison(requests::RunRequest{}, 0).max_default_steps, kBareCpuSteps);
  EXPECT_EQ(with_default_comparison(requests::RunRequest{}, 8).max_default_steps, kBareCpuSteps)
      << "a spawned rank (which passes 0 devices) must train its parent's steps";
  requests::RunRequest steps;
  steps.steps = 7;
  EXPECT_EQ(with_default_comparison(steps, 0).max_default_steps, 0);
  requests::RunRequest file;
  file.config = "my.yaml";
  EXPECT_EQ(with_default_comparison(file, 0).max_default_steps, 0)
      << "a scenario file's TRAIN.STEPS wins";
  requests::RunRequest keys;
  keys.overrides = {"TRAIN.STEPS", "5"};
  EXPECT_EQ(with_default_comparison(keys, 0).max_default_steps, 0);
}

TEST(DefaultComparison, ARequestNamingModesOrGpusKeepsItsMeaning) {
  requests::RunRequest modes;
  modes.modes = {"single"};
  const requests::RunRequest kept = with_default_comparison(modes, 4);
  EXPECT_EQ(kept.modes, std::vector<std::string>{"single"});
  EXPECT_EQ(kept.world_size, 1);
  requests::RunRequest gpus;
  gpus.world_size = 3;
  gpus.world_size_given = true;
  EXPECT_TRUE(with_default_comparison(gpus, 4).modes.empty());
  EXPECT_EQ(with_default_comparison(gpus, 4).world_size, 3);
}

}  // namespace
}  // namespace ddpbench::run
