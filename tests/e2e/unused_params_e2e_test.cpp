// unused_params_e2e_test.cpp — scenario unused_params end to end (issue 24): a head that gets no
// gradient on some steps (on every rank at steps 0 and 1, on rank 1 only at step 2). Without
// --find-unused-parameters DDP names the parameters and the fix and stops: exit 3, no hang, no
// output. With it, DDP and DP equal single-device training in lockstep float32 and in float64 —
// including which gradients are None — and a corrupted gradient of the sometimes-unused head
// fails the comparison.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;
using testing::find_check;
using testing::read_json;

class UnusedParamsE2E : public testing::TempDirTest {};

TEST_F(UnusedParamsE2E, WithoutTheFlagDdpNamesTheParametersAndStops) {
  for (const char* impl : {"bucketed", "naive"}) {
    const std::string dir = path(std::string("nofind-") + impl);
    const auto start = std::chrono::steady_clock::now();
    const auto r = ddpbench({"run", "--scenario", "unused_params", "--gpus", "2", "--ddp-impl",
                             impl, "--timeout", "30", "--out", dir});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.exit_code, 3) << impl << r.out << r.err;
    EXPECT_NE(r.err.find("head_b.weight"), std::string::npos) << impl << r.err;
    EXPECT_NE(r.err.find("--find-unused-parameters"), std::string::npos) << impl << r.err;
    EXPECT_NE(r.err.find("rank"), std::string::npos) << impl << r.err;
    EXPECT_LT(seconds, 25) << impl << ": stopped by the timeout, not by the error";
    EXPECT_EQ(testing::folder_names(dir), testing::kFailureOnlyFolder) << impl;
    EXPECT_FALSE(testing::process_alive_with(dir)) << impl << ": a worker survived";
  }
}

TEST_F(UnusedParamsE2E, WithTheFlagDpAndDdpEqualSingleDevice) {
  for (const char* dtype : {"float32", "float64"}) {
    const std::string dir = path(std::string("find-") + dtype);
    const auto r =
        ddpbench({"run", "--scenario", "unused_params", "--gpus", "2", "--modes", "single,dp,ddp",
                  "--find-unused-parameters", "--dtype", dtype, "--check-only", "--out", dir});
    ASSERT_EQ(r.exit_code, 0) << dtype << r.out << r.err;
    const auto report = read_json(dir + "/report.json");
    EXPECT_TRUE(report.at("passed").get<bool>());
    for (const char* mode : {"dp", "ddp"}) {
      EXPECT_EQ(find_check(report, mode, "gradients").at("status"), "pass") << dtype << mode;
      EXPECT_EQ(find_check(report, mode, "loss").at("status"), "pass") << dtype << mode;
    }
    EXPECT_EQ(find_check(report, "ddp", "ranks_bitwise_equal").at("status"), "pass");
  }
}

// The hostile-user battery's defect 16: the naive strategy zero-filled head_b's gradient at step 0,
// where no rank uses it and single-device training keeps it None, and failed every correct run.
// Steps 0-2 cover unused everywhere (head_b, then head_a) and used on rank 0 only (head_b at step
// 2).
TEST_F(UnusedParamsE2E, TheNaiveStrategyAgreesWithSingleDeviceToo) {
  const auto r = ddpbench({"run", "--scenario", "unused_params", "--gpus", "2", "--modes",
                           "single,dp,ddp", "--ddp-impl", "naive", "--find-unused-parameters",
                           "--steps", "3", "--check-only", "--out", path("naive")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("naive") + "/report.json");
  EXPECT_EQ(find_check(report, "ddp", "gradients").at("status"), "pass");
  EXPECT_EQ(find_check(report, "ddp", "ranks_bitwise_equal").at("status"), "pass");
}

TEST_F(UnusedParamsE2E, ACorruptedGradientOfTheSometimesUnusedHeadFails) {
  // Step 2: head_b is used on rank 0 only; rank 0's contribution is corrupted.
  const auto r = ddpbench({"run", "--scenario", "unused_params", "--gpus", "2",
                           "--find-unused-parameters", "--check-only", "--inject-fault",
                           "grad:rank=0,step=2,tensor=head_b.weight", "--out", path("bad")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto g = find_check(read_json(path("bad") + "/report.json"), "ddp", "gradients");
  EXPECT_EQ(g.at("status"), "fail");
  EXPECT_EQ(g.at("tensor"), "head_b.weight");
  EXPECT_EQ(g.at("step"), 2);
}

}  // namespace
}  // namespace ddpbench
