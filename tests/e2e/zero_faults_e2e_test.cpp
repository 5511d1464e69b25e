// zero_faults_e2e_test.cpp — what the zero mode's checks catch, end to end: matches_ddp sees a
// shard apart from ddp's that no tolerance can; every zero fault (a corrupted gradient, a corrupted
// shard after its step, a parameter its owner did not step, a missed broadcast or all-gather, a
// wrong optimizer state shard) FAILs naming the tensor; a crashing rank is named; and what zero
// does not take is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/cli_runner.h"
#include "support/zero_e2e_fixture.h"

namespace ddpbench {
namespace {
using testing::ddpbench;
using testing::find_check;
using testing::read_json;

// matches_ddp sees what no check against the reference can: a shard corrupted by 1e-6 of itself
// in float32 is inside every tolerance, and apart from ddp's bit for bit. At 3 ranks the
// check is the normalized rule, and says why. A zero fault that no check sees fails the run.
TEST_F(ZeroE2E, MatchesDdpSeesWhatNoToleranceCan) {
  {
    const std::string dir = path("apart");
    const auto r =
        run_zero(dir, 1, "single,ddp,zero",
                 {"--comparison", "free", "--inject-fault", "shard:rank=1,step=2,eps=1e-6"});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    const auto report = read_json(dir + "/report.json");
    for (const char* check : {"loss", "gradients", "parameters", "ranks_bitwise_equal"}) {
      EXPECT_EQ(find_check(report, "zero", check).at("status"), "pass") << check;
    }
    const auto& ddp = find_check(report, "zero", "matches_ddp");
    EXPECT_EQ(ddp.at("status"), "fail") << ddp;
    EXPECT_GT(ddp.at("outside").get<int64_t>(), 0);
    EXPECT_NE(r.out.find("matches_ddp"), std::string::npos) << r.out;
  }
  {
    const std::string dir = path("three");
    const auto r =
        ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "3", "--modes", "single,ddp,zero",
                  "--zero-stage", "2", "--steps", "3", "--check-only", "--out", dir});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto report = read_json(dir + "/report.json");
    const auto& ddp = find_check(report, "zero", "matches_ddp");
    EXPECT_EQ(ddp.at("status"), "pass") << ddp;
    EXPECT_EQ(ddp.at("measure"), "normalized");
    EXPECT_NE(ddp.at("detail").get<std::string>().find("reduce-scatter"), std::string::npos);
  }
  {
    // Lockstep, float32: 1 + 1e-7 rounds most of the shard back to itself, and the next step
    // starts from the reference's state.
    const std::string dir = path("unseen");
    const auto r =
        run_zero(dir, 1, "single,zero", {"--inject-fault", "shard:rank=1,step=2,eps=1e-7"});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    const auto report = read_json(dir + "/report.json");
    const auto& unseen = find_check(report, "zero", "injected_fault");
    EXPECT_EQ(unseen.at("status"), "fail");
    EXPECT_NE(unseen.at("detail").get<std::string>().find("was not detected"), std::string::npos);
  }
}

TEST_F(ZeroE2E, EveryFaultFailsNamingWhatItBroke) {
  struct Case {
    const char* fault;
    const char* check;  // the check that must fail
    int stage;
  };
  // The state fault scales one rank's optimizer state after its step: the updates cannot see it
  // (lockstep starts each step from the reference's state); the optimizer_state check does.
  // The grad fault acts in stage 1's buckets and before stages 2 and 3's reduce-scatters. At
  // stage 3 the shard fault corrupts a rank's own rows, the owner fault leaves them un-stepped,
  // and the gather fault computes a forward with the others' rows of the step before: the
  // ranks' forward parameters part.
  for (const Case& c :
       {Case{"grad:rank=1,step=1,eps=1e-2", "gradients", 1},
        Case{"grad:rank=1,step=1,eps=1e-2", "gradients", 2},
        Case{"grad:rank=1,step=1,eps=1e-2", "gradients", 3},
        Case{"shard:rank=1,step=1,eps=1e-2", "updates", 1},
        Case{"shard:rank=1,step=1,eps=1e-2", "updates", 3},
        Case{"owner:rank=0,step=2", "updates", 2}, Case{"owner:rank=0,step=2", "updates", 3},
        Case{"gather:rank=1,step=1", "ranks_bitwise_equal", 1},
        Case{"gather:rank=1,step=1", "ranks_bitwise_equal", 3},
        Case{"state:rank=1,step=1,eps=1e-2", "optimizer_state", 2},
        Case{"state:rank=1,step=1,eps=1e-2", "optimizer_state", 3}}) {
    {
      const int stage = c.stage;
      const std::string dir = path(std::string(c.fault).substr(0, 5) + std::to_string(stage));
      const auto r =
          run_zero(dir, stage, "single,zero", {"--dtype", "float32", "--inject-fault", c.fault});
      EXPECT_EQ(r.exit_code, 1) << c.fault << stage << r.out << r.err;
      const auto report = read_json(dir + "/report.json");
      EXPECT_FALSE(report.at("passed").get<bool>()) << c.fault;
      EXPECT_EQ(find_check(report, "zero", c.check).at("status"), "fail")
          << c.fault << " stage " << stage;
    }
  }
}

// tiny_resnet's blocks are gathered as the forward enters them (unit_gathers.h): the gather fault
// still reaches the units' all-gathers (UnitGathers' unit test: the blocks' too), so the ranks'
// forward parameters part.
TEST_F(ZeroE2E, AStaleGatherOfABlockFailsAtStageThree) {
  const std::string dir = path("stale-block");
  const auto r = ddpbench({"run", "--scenario", "tiny_resnet", "--gpus", "2", "--modes",
                           "single,zero", "--zero-stage", "3", "--steps", "3", "--check-only",
                           "--inject-fault", "gather:rank=1,step=1", "--out", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto report = read_json(dir + "/report.json");
  EXPECT_EQ(find_check(report, "zero", "ranks_bitwise_equal").at("status"), "fail");
}

TEST_F(ZeroE2E, ACrashingRankIsNamed) {
  const auto r =
      run_zero(path("crash"), 1, "single,zero", {"--inject-fault", "crash:rank=1,step=1"});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("rank 1"), std::string::npos) << r.err;
}

TEST_F(ZeroE2E, WhatZeroDoesNotTakeIsRefused) {
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--zero-stage", "2"},
        std::vector<std::string>{"--modes", "single,zero", "--zero-stage", "4"},
        // Free-running (float64), nothing would see a state scaled at the last step.
        std::vector<std::string>{"--modes", "single,zero", "--dtype", "float64", "--inject-fault",
                                 "state:rank=1,step=1"},
        std::vector<std::string>{"--modes", "single,ddp", "--inject-fault", "shard:rank=1,step=1"},
        std::vector<std::string>{"--modes", "single,ddp,zero", "--accumulation-steps", "2",
                                 "--no-sync", "off"}}) {
    std::vector<std::string> args = {"run",     "--scenario", "toy_cnn", "--gpus",   "2",
                                     "--steps", "2",          "--out",   path("bad")};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << bad.back() << r.out << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("bad") + "/report.json"));
  }
}

}  // namespace
}  // namespace ddpbench
