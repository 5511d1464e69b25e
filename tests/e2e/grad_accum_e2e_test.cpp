// grad_accum_e2e_test.cpp — scenario grad_accum end to end (issue 24): dp and ddp accumulating
// A = 4 micro-steps equal single-device training on the whole batch of A x B, in lockstep float32
// and free-running float64; forgetting DDP's no_sync costs A-1 extra allreduces per optimizer
// step (per bucket, counted by the communicator) and changes nothing else; and each check can
// fail: a corrupted rank gradient (ddp) and the classic unscaled micro-loss (dp and ddp).
#include <gtest/gtest.h>

#include <filesystem>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;
using testing::find_check;
using testing::read_json;

class GradAccumE2E : public testing::TempDirTest {
 protected:
  static nlohmann::json result_of(const nlohmann::json& report, const std::string& mode) {
    for (const auto& r : report.at("results")) {
      if (r.at("mode") == mode) return r;
    }
    ADD_FAILURE() << "no result for " << mode;
    return {};
  }
};

TEST_F(GradAccumE2E, AccumulationEqualsTheBigBatchInDpAndDdp) {
  for (const char* dtype : {"float32", "float64"}) {
    const std::string dir = path(std::string("acc-") + dtype);
    const auto r = ddpbench({"run", "--scenario", "grad_accum", "--gpus", "2", "--modes",
                             "single,dp,ddp", "--dtype", dtype, "--check-only", "--out", dir});
    ASSERT_EQ(r.exit_code, 0) << dtype << r.out << r.err;
    EXPECT_NE(r.out.find("4 micro-steps of 8 samples"), std::string::npos) << r.out;
    const auto report = read_json(dir + "/report.json");
    EXPECT_TRUE(report.at("passed").get<bool>());
    for (const char* mode : {"dp", "ddp"}) {
      EXPECT_EQ(find_check(report, mode, "loss").at("status"), "pass") << dtype << " " << mode;
      EXPECT_EQ(find_check(report, mode, "gradients").at("status"), "pass") << dtype << " " << mode;
    }
    EXPECT_EQ(find_check(report, "ddp", "ranks_bitwise_equal").at("status"), "pass");
  }
}

TEST_F(GradAccumE2E, ForgettingNoSyncCostsAllreducesAndChangesNothingElse) {
  auto run = [&](const std::string& no_sync) {
    const std::string dir = path("nosync-" + no_sync);
    const auto r =
        ddpbench({"run", "--scenario", "grad_accum", "--gpus", "2", "--modes", "single,ddp",
                  "--dtype", "float64", "--check-only", "--no-sync", no_sync, "--out", dir});
    EXPECT_EQ(r.exit_code, 0) << no_sync << r.out << r.err;
    return read_json(dir + "/report.json");
  };
  const auto on = run("on");
  const auto off = run("off");
  const auto ddp_on = result_of(on, "ddp");
  const auto ddp_off = result_of(off, "ddp");
  const int64_t buckets = ddp_on.at("buckets").get<int64_t>();
  ASSERT_GE(buckets, 1);
  // no_sync: only the last micro-step's backward reduces, one allreduce per bucket.
  EXPECT_EQ(ddp_on.at("gradient_collectives_per_step").get<int64_t>(), buckets);
  // Forgotten: every one of the A = 4 micro-steps reduces, A-1 extra allreduces per bucket.
  EXPECT_EQ(ddp_off.at("gradient_collectives_per_step").get<int64_t>(), 4 * buckets);
  // ...and nothing else changes: both pass against single in float64, and the two trained
  // states agree within the scenario's float64 tolerance.
  EXPECT_TRUE(on.at("passed").get<bool>());
  EXPECT_TRUE(off.at("passed").get<bool>());
  const auto py =
      testing::python({"-c",
                       "import sys, torch\n"
                       "a = torch.load(sys.argv[1], weights_only=True)\n"
                       "b = torch.load(sys.argv[2], weights_only=True)\n"
                       "assert a and sorted(a) == sorted(b), (sorted(a), sorted(b))\n"
                       "for k in a:\n"
                       "    torch.testing.assert_close(a[k], b[k], rtol=1e-10, atol=1e-12)\n"
                       "print('agree', len(a))\n",
                       path("nosync-on") + "/state_ddp.pt", path("nosync-off") + "/state_ddp.pt"});
  EXPECT_EQ(py.exit_code, 0) << py.out << py.err;
}

TEST_F(GradAccumE2E, ACorruptedRankGradientFailsTheAccumulatedComparison) {
  const auto r =
      ddpbench({"run", "--scenario", "grad_accum", "--gpus", "2", "--check-only", "--inject-fault",
                "grad:rank=1,step=2,tensor=fc1.weight", "--out", path("grad")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto g = find_check(read_json(path("grad") + "/report.json"), "ddp", "gradients");
  EXPECT_EQ(g.at("status"), "fail");
  EXPECT_EQ(g.at("tensor"), "fc1.weight");
  EXPECT_EQ(g.at("step"), 2);
}

TEST_F(GradAccumE2E, UnscaledMicroLossesFailInDpAndDdp) {
  for (const char* dtype : {"float32", "float64"}) {
    const std::string dir = path(std::string("noscale-") + dtype);
    const auto r = ddpbench({"run", "--scenario", "grad_accum", "--gpus", "2", "--modes",
                             "single,dp,ddp", "--dtype", dtype, "--check-only", "--inject-fault",
                             "noscale:step=1", "--out", dir});
    EXPECT_EQ(r.exit_code, 1) << dtype << r.out << r.err;
    const auto report = read_json(dir + "/report.json");
    for (const char* mode : {"dp", "ddp"}) {
      const auto g = find_check(report, mode, "gradients");
      EXPECT_EQ(g.at("status"), "fail") << dtype << " " << mode;
      EXPECT_EQ(g.at("step"), 1) << dtype << " " << mode;
    }
  }
}

TEST_F(GradAccumE2E, AccumulationInputThatCannotWorkIsExitTwo) {
  const std::vector<std::vector<std::string>> bad = {
      // 32 samples do not split into 3 ranks x 4 micro-steps.
      {"run", "--scenario", "grad_accum", "--gpus", "3", "--batch-size", "30"},
      {"run", "--scenario", "grad_accum", "--gpus", "2", "--accumulation-steps", "3"},
      // Nothing to forget without accumulation.
      {"run", "--scenario", "toy_cnn", "--gpus", "2", "--no-sync", "off"},
      // RMSE of micro-batches is not the RMSE of the batch.
      {"run", "--scenario", "rmse_linear", "--gpus", "2", "--accumulation-steps", "2"},
      {"run", "--scenario", "toy_cnn", "--gpus", "2", "--inject-fault", "noscale:step=0"},
      // 128 samples in batches of 48 = 2 ranks x 3 micro-steps x 8: step 2 gives each rank the
      // 16 left, which do not split into 3.
      {"run", "--scenario", "grad_accum", "--gpus", "2", "--batch-size", "48", "--steps", "3",
       "--accumulation-steps", "3"},
  };
  for (const auto& args : bad) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--out", path("bad")});
    const auto r = ddpbench(a);
    EXPECT_EQ(r.exit_code, 2) << a[4] << " " << a[6] << ": " << r.err;
    EXPECT_FALSE(fs::exists(path("bad")));
  }
}

}  // namespace
}  // namespace ddpbench
