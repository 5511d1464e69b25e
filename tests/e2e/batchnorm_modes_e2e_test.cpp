// batchnorm_modes_e2e_test.cpp — all three modes end to end and the BatchNorm questions: DP and
// DDP equal single-device without BatchNorm; DDP + SyncBN equals single-device parameters AND
// buffers (on tiny_resnet, cifar_resnet18's layout at 1/40 of its cost, with --sync-bn as
// resnet18_syncbn sets it); a SyncBN fault turns that into FAIL; ResNet under DP is judged against
// the exact reference; padding is announced and recorded.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
using testing::ddpbench;
using testing::find_check;
using testing::read_json;

class BatchNormModes : public testing::TempDirTest {};

TEST_F(BatchNormModes, AllThreeModesAgreeWithoutBatchNormInFloat64) {
  const auto r =
      ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--modes", "single,dp,ddp",
                "--dtype", "float64", "--steps", "4", "--out", path("toy")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("replicas run as 2 threads"), std::string::npos) << r.out;
  const auto report = read_json(path("toy") + "/report.json");
  for (const char* mode : {"dp", "ddp"}) {
    for (const char* check : {"loss", "gradients", "parameters"}) {
      const auto c = find_check(report, mode, check);
      EXPECT_EQ(c.at("status"), "pass") << mode << " " << check;
      EXPECT_LT(c.at("max_abs_diff").get<double>(), 1e-12) << mode << " " << check;
    }
  }
}

TEST_F(BatchNormModes, SyncBnMakesDdpEqualSingleDeviceIncludingBuffers) {
  const auto r = ddpbench({"run", "--scenario", "tiny_resnet", "--sync-bn", "--dtype", "float64",
                           "--gpus", "2", "--modes", "single,dp,ddp", "--steps", "2",
                           "--batch-size", "8", "--out", path("sync")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("sync") + "/report.json");
  EXPECT_EQ(report.at("config").at("dtype"), "float64");
  for (const char* check : {"loss", "gradients", "parameters", "buffers"}) {
    const auto c = find_check(report, "ddp", check);
    EXPECT_EQ(c.at("status"), "pass") << check << ": " << c.dump();
    EXPECT_LT(c.at("max_abs_diff").get<double>(), 1e-10) << check;
  }
  // DataParallel has no SyncBN: per-replica statistics and replica 0's buffers, judged exactly
  // against the reference that computes just that, with the cause named.
  for (const char* check : {"loss", "gradients", "parameters", "buffers"}) {
    EXPECT_EQ(find_check(report, "dp", check).at("status"), "pass") << check;
  }
  const auto& dp = report.at("results")[1];
  ASSERT_EQ(dp.at("mode"), "dp");
  EXPECT_NE(dp.at("reference").at("causes")[0].get<std::string>().find("replica 0"),
            std::string::npos);
  EXPECT_EQ(report.at("results")[2].at("reference").at("name"), "single-device training");
}

TEST_F(BatchNormModes, SyncBnInFloat32PassesOverTwoSteps) {
  const auto r =
      ddpbench({"run", "--scenario", "tiny_resnet", "--sync-bn", "--gpus", "2", "--steps", "2",
                "--batch-size", "16", "--dtype", "float32", "--check-only", "--out", path("f32")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  // The same run with rank 1 normalising by its own statistics at step 1 fails there.
  const auto bad =
      ddpbench({"run", "--scenario", "tiny_resnet", "--sync-bn", "--gpus", "2", "--steps", "2",
                "--batch-size", "16", "--dtype", "float32", "--check-only", "--inject-fault",
                "syncbn:rank=1,step=1", "--out", path("f32bad")});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  const auto report = read_json(path("f32bad") + "/report.json");
  EXPECT_EQ(report.at("results")[1].at("first_divergence").at("step"), 1);
}

// The case of Note [SyncBN arithmetic reference]: with seed 1 at batch 16, one element of
// layer3.0.bn1's output lies within float32 rounding of 0, and SyncBN and PyTorch's BatchNorm
// kernel round it to opposite signs (6.9% of layer3.0.conv1.weight's gradient at step 0 against
// plain single-device training, on libtorch 1.13 and 2.11 alike, on the Intel machines this was
// found on; on an AMD EPYC (2026-11-27) the CPU's kernels round that element alike and no flip
// occurs: 3.6e-7). Judged against single-device training in SyncBN's arithmetic, DDP passes at
// rounding level either way; the plain difference stays in the report as a figure.
TEST_F(BatchNormModes, AReluFlipByBatchNormRoundingIsNotADdpError) {
  const auto r = ddpbench({"run",
                           "--scenario",
                           "resnet18_syncbn",
                           "--gpus",
                           "2",
                           "--steps",
                           "1",
                           "--batch-size",
                           "16",
                           "--dtype",
                           "float32",
                           "--seed",
                           "1",
                           "--modes",
                           "single,ddp",
                           "--check-only",
                           "--grad-check",
                           "full",
                           "--out",
                           path("flip")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("flip") + "/report.json");
  const auto& reference = report.at("results")[1].at("reference");
  EXPECT_NE(reference.at("name").get<std::string>().find("SyncBN's arithmetic"), std::string::npos)
      << reference.dump();
  // Whether the flip occurs depends on the CPU's convolution kernels (above); the report names the
  // cause either way, and ddp passes against the reference either way.
  if (reference.at("max_parameter_diff").get<double>() <= 1e-5) {
    std::cout << "no ReLU flip on this CPU: " << reference.at("summary") << "\n";
  }
  EXPECT_EQ(reference.at("causes").size(), 1u) << reference.dump();
  EXPECT_LT(find_check(report, "ddp", "gradients").at("error").get<double>(), 2e-5);
}

TEST_F(BatchNormModes, SkippingTheStatisticsExchangeOnOneRankFails) {
  const auto r = ddpbench({"run", "--scenario", "tiny_resnet", "--sync-bn", "--dtype", "float64",
                           "--gpus", "2", "--steps", "2", "--batch-size", "8", "--inject-fault",
                           "syncbn:rank=1,step=0", "--out", path("bad")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto report = read_json(path("bad") + "/report.json");
  EXPECT_EQ(find_check(report, "ddp", "buffers").at("status"), "fail");
  EXPECT_EQ(find_check(report, "ddp", "parameters").at("status"), "fail");
}

TEST_F(BatchNormModes, SyncBnNeedsBatchNormLayers) {
  const auto r =
      ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--sync-bn", "--out", path("none")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no BatchNorm"), std::string::npos) << r.err;
}

// DDP's buffer broadcast only changes what ranks other than 0 hold (rank 0 is its source and the
// state every check judges), so a rank that loses it is caught by the per-rank buffer check.
TEST_F(BatchNormModes, ARankThatSkipsTheBufferBroadcastIsCaughtOnTheBuffers) {
  const auto r = ddpbench({"run", "--scenario", "tiny_resnet", "--gpus", "2", "--modes",
                           "single,ddp", "--steps", "3", "--batch-size", "16", "--check-only",
                           "--inject-fault", "buffers:rank=1,step=1", "--out", path("bcast")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto report = read_json(path("bcast") + "/report.json");
  const auto c = find_check(report, "ddp", "ranks_buffers_equal");
  EXPECT_EQ(c.at("status"), "fail") << c.dump();
  EXPECT_EQ(c.at("step"), 1);
  EXPECT_NE(c.at("detail").get<std::string>().find("rank 1"), std::string::npos) << c.dump();
  const auto& first = report.at("results")[1].at("first_divergence");
  EXPECT_EQ(first.at("stage"), "ranks_buffers_equal") << first.dump();
  EXPECT_EQ(first.at("step"), 1);
  // Without the fault the same check passes.
  const auto ok =
      ddpbench({"run", "--scenario", "tiny_resnet", "--gpus", "2", "--modes", "single,ddp",
                "--steps", "2", "--batch-size", "16", "--check-only", "--out", path("bcast_ok")});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_EQ(find_check(read_json(path("bcast_ok") + "/report.json"), "ddp", "ranks_buffers_equal")
                .at("status"),
            "pass");
}

TEST_F(BatchNormModes, DataParallelWithTheWrongBufferRuleIsCaught) {
  const auto r = ddpbench({"run", "--scenario", "tiny_resnet", "--gpus", "2", "--modes",
                           "single,dp", "--steps", "3", "--batch-size", "16", "--check-only",
                           "--inject-fault", "dpbuffers:step=1", "--out", path("dpbuf")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto report = read_json(path("dpbuf") + "/report.json");
  const auto c = find_check(report, "dp", "buffers");
  EXPECT_EQ(c.at("status"), "fail") << c.dump();
  EXPECT_GE(c.at("step"), 1) << "the worst buffer difference is at or after the fault";
  EXPECT_EQ(find_check(report, "dp", "gradients").at("status"), "pass")
      << "running statistics do not enter a training-mode forward";
  const auto& first = report.at("results")[1].at("first_divergence");
  EXPECT_EQ(first.at("stage"), "buffers") << first.dump();
  EXPECT_EQ(first.at("step"), 1) << first.dump();
}

TEST_F(BatchNormModes, BufferFaultsAreRefusedWhereTheyCannotWork) {
  struct Case {
    std::vector<std::string> extra;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--scenario", "tiny_resnet", "--inject-fault", "buffers:rank=0,step=0"}, "rank 0"},
           {{"--scenario", "tiny_resnet", "--inject-fault", "buffers:rank=1,step=0",
             "--no-broadcast-buffers"},
            "--no-broadcast-buffers"},
           {{"--scenario", "toy_cnn", "--modes", "single,dp", "--inject-fault", "dpbuffers:step=0"},
            "no buffers"},
           {{"--scenario", "tiny_resnet", "--modes", "single,ddp", "--inject-fault",
             "dpbuffers:step=0"},
            "needs the dp mode"}}) {
    std::vector<std::string> args = {"run",   "--gpus",       "2", "--steps",
                                     "1",     "--batch-size", "4", "--check-only",
                                     "--out", path("refused")};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("refused")));
  }
}

TEST_F(BatchNormModes, PaddingIsAnnouncedAndRecorded) {
  // 40 real CIFAR records over 3 ranks: 14 per rank, 2 duplicated by padding per epoch.
  const std::string data = path("cifar");
  testing::write_cifar_batch(data, 40, 13);
  const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--data-dir", data, "--gpus", "3",
                           "--batch-size", "6", "--steps", "6", "--out", path("pad")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("2 sample(s) duplicated by padding"), std::string::npos) << r.out;
  const auto sampler = read_json(path("pad") + "/report.json").at("config").at("sampler");
  EXPECT_EQ(sampler.at("padded_per_epoch"), 2);
  EXPECT_EQ(sampler.at("num_samples"), 14);
}

}  // namespace
}  // namespace ddpbench
