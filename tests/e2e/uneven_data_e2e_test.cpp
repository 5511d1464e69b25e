// uneven_data_e2e_test.cpp — issue 24's uneven_data scenario through the binary: a global batch
// the world size does not divide (20 over 3 ranks = 7,7,6) runs instead of being refused; with
// drop_last off and on, over several epochs (set_epoch reshuffles), single, dp and ddp pass
// against their references in float32 lockstep and float64, and the run states what the sampler
// duplicated or dropped per epoch. Ranks 0 and 1 run out of batches one step before rank 2 at the
// end of every epoch (PyTorch's Join): the ranks neither hang nor disagree, and a joined rank that
// contributes a gradient instead of zeros, or a corrupted gradient on the step only rank 2
// trains, makes the comparison fail. Join runs as PyTorch runs it, checked against PyTorch
// under Join (issue 55): a joined rank takes no step, so momentum parts the ranks, and
// ZeroRedundancyOptimizer's joined rank steps stale gradients; both FAIL, truly.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
using testing::ddpbench;
using testing::find_check;
using testing::read_json;
using testing::result_of;

class UnevenData : public testing::TempDirTest {};

void expect_every_check_passes(const nlohmann::json& report, const std::string& what) {
  for (const char* mode : {"dp", "ddp"}) {
    for (const auto& c : result_of(report, mode).at("checks")) {
      EXPECT_EQ(c.at("status"), "pass") << what << " " << mode << ": " << c.dump();
    }
  }
}

// reference/torch_ddp_oracle.py on run `dir`'s exported batches (each epoch inside PyTorch's
// Join), checking `state` (state_ddp.pt or, with `zero`, state_zero.pt) within 1e-12.
testing::ProcessResult oracle_check(const std::string& dir, const std::string& state,
                                    bool zero = false) {
  std::vector<std::string> args = {testing::oracle("torch_ddp_oracle.py"), "--batches",
                                   dir + "/batches.pt"};
  if (zero) args.push_back("--zero");
  args.insert(args.end(), {"--check", dir + "/" + state, "--atol", "1e-12", "--rtol", "0"});
  return testing::python(args);
}

// 100 samples, 3 ranks: shares of 34 (2 padded) or 33 (1 dropped); 14 steps = epochs 0 and 1 and
// the start of epoch 2, with ranks 0 and 1 joined at steps 5 and 11.
TEST_F(UnevenData, PassesInEveryModeWithDropLastOffAndOnInFloat32LockstepAndFloat64) {
  struct Case {
    std::vector<std::string> extra;
    const char* says;
    int64_t padded, dropped;
  };
  const std::vector<Case> cases = {
      {{}, "2 sample(s) duplicated by padding, 0 dropped (drop_last=false)", 2, 0},
      {{"--drop-last"}, "0 sample(s) duplicated by padding, 1 dropped (drop_last=true)", 0, 1},
  };
  for (const Case& c : cases) {
    for (const char* dtype : {"float32", "float64"}) {
      const std::string what = std::string(dtype) + (c.extra.empty() ? "" : " --drop-last");
      const std::string out = path(std::string("p") + dtype + std::to_string(c.extra.size()));
      std::vector<std::string> args = {"run", "--scenario",   "uneven_data",   "--gpus",
                                       "3",   "--modes",      "single,dp,ddp", "--dtype",
                                       dtype, "--check-only", "--out",         out};
      args.insert(args.end(), c.extra.begin(), c.extra.end());
      const auto r = ddpbench(args);
      ASSERT_EQ(r.exit_code, 0) << what << "\n" << r.out << r.err;
      EXPECT_NE(r.out.find("global batch 20 = 3 rank(s) x 7,7,6, 6 steps/epoch"), std::string::npos)
          << r.out;
      EXPECT_NE(r.out.find("batches per rank 5,5,6"), std::string::npos) << r.out;
      EXPECT_NE(r.out.find(c.says), std::string::npos) << what << "\n" << r.out;
      const auto report = read_json(out + "/report.json");
      expect_every_check_passes(report, what);
      const auto& sampler = report.at("config").at("sampler");
      EXPECT_EQ(sampler.at("padded_per_epoch"), c.padded) << what;
      EXPECT_EQ(sampler.at("dropped_per_epoch"), c.dropped) << what;
      EXPECT_EQ(sampler.at("drop_last"), !c.extra.empty()) << what;
      // DP's loss is the gathered output's, the global mean: judged against single-device
      // training itself. DDP's mean of per-rank means is not: its exact reference names why.
      EXPECT_TRUE(result_of(report, "dp").at("reference").at("causes").empty()) << what;
      const auto& ddp_ref = result_of(report, "ddp").at("reference");
      ASSERT_EQ(ddp_ref.at("causes").size(), 1u) << ddp_ref.dump();
      EXPECT_NE(ddp_ref.at("causes")[0].get<std::string>().find("Uneven rank batches"),
                std::string::npos)
          << ddp_ref.dump();
      EXPECT_GT(ddp_ref.at("loss_diff").get<double>(), 1e-4) << "the cause is real: " << what;
      EXPECT_EQ(find_check(report, "ddp", "ranks_bitwise_equal").at("status"), "pass") << what;
    }
  }
}

// Join: on steps 5 and 11 ranks 0 and 1 have no batch and shadow rank 2's allreduces. Every
// reducer variant that issues collectives differently (bucketed, naive, with the unused-parameter
// map) must neither hang (the launcher's timeout would end it with exit 3) nor let the ranks part.
TEST_F(UnevenData, JoinedRanksDoNotHangAndAgreeWithEveryReducer) {
  const std::vector<std::vector<std::string>> variants = {
      {},
      {"--ddp-impl", "naive"},
      {"--find-unused-parameters"},
      {"--bucket-cap-mb", "0.0001"},
      // PyTorch's Reducer, its joined rank driven as Python's Join hook does
      // (Note [A joined c10d rank]), with a comm hook on the zeros.
      {"--ddp-impl", "c10d", "--comm-hook", "fp16"}};
  int i = 0;
  for (const auto& v : variants) {
    const std::string out = path("j" + std::to_string(i++));
    std::vector<std::string> args = {"run",     "--scenario", "uneven_data", "--gpus", "3",
                                     "--modes", "single,ddp", "--steps",     "13",     "--warmup",
                                     "1",       "--timeout",  "60",          "--out",  out};
    args.insert(args.end(), v.begin(), v.end());
    const auto r = ddpbench(args);
    ASSERT_EQ(r.exit_code, 0) << (v.empty() ? "bucketed" : v[0]) << "\n" << r.out << r.err;
    const auto report = read_json(out + "/report.json");
    for (const auto& c : result_of(report, "ddp").at("checks")) {
      EXPECT_EQ(c.at("status"), "pass") << c.dump();
    }
    EXPECT_EQ(find_check(report, "ddp", "ranks_bitwise_equal").at("status"), "pass");
  }
}

// A joined rank that trains on its last batch again instead of contributing zeros (join fault),
// and a 1e-3 gradient error on the step only rank 2 trains: both are caught at their step.
TEST_F(UnevenData, AWrongJoinOrAGradientErrorOnAJoinStepFails) {
  struct Case {
    const char* fault;
    const char* dtype;
    int64_t step;
    const char* impl;
  };
  for (const Case& c : {Case{"join:rank=0,step=5", "float32", 5, "bucketed"},
                        Case{"join:rank=1,step=11", "float64", 11, "bucketed"},
                        Case{"join:rank=0,step=5", "float64", 5, "c10d"},
                        Case{"grad:rank=2,step=5,eps=1e-3", "float32", 5, "bucketed"}}) {
    const std::string out = path(std::string("f") + std::to_string(c.step) + c.dtype + c.impl);
    const auto r = ddpbench({"run", "--scenario", "uneven_data", "--gpus", "3", "--modes",
                             "single,ddp", "--ddp-impl", c.impl, "--dtype", c.dtype, "--check-only",
                             "--inject-fault", c.fault, "--out", out});
    EXPECT_EQ(r.exit_code, 1) << c.fault << "\n" << r.out << r.err;
    const auto report = read_json(out + "/report.json");
    const auto gradients = find_check(report, "ddp", "gradients");
    EXPECT_EQ(gradients.at("status"), "fail") << c.fault;
    EXPECT_EQ(gradients.at("step"), c.step) << c.fault;
    EXPECT_EQ(result_of(report, "ddp").at("first_divergence").at("step"), c.step) << c.fault;
  }
}

// The issue's command: the default scenario (ResNet-18 with BatchNorm) at 3 ranks and batch 20,
// judged against ghost BatchNorm over the same 7,7,6 chunks.
TEST_F(UnevenData, TheIssueCommandRunsAndPasses) {
  const std::string out = path("issue");
  const auto r = ddpbench({"run", "--gpus", "3", "--batch-size", "20", "--modes", "single,dp,ddp",
                           "--steps", "2", "--check-only", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("3 rank(s) x 7,7,6"), std::string::npos) << r.out;
  expect_every_check_passes(read_json(out + "/report.json"), "cifar_resnet18");
}

// PyTorch's Join as it runs (Note [PyTorch's Join, as it runs], modes/common/joined_batch.h),
// judged against PyTorch itself: reference/torch_ddp_oracle.py trains the exported batches with
// each epoch inside torch.distributed.algorithms.join.Join. With plain SGD ddp (both engines)
// passes and is PyTorch's DDP bit for bit. With momentum PyTorch's joined ranks take no step, so
// their momentum lags after the epoch's final sync and the ranks part at the next epoch's first
// step: ddp is still PyTorch bit for bit, and FAILs there, naming the cause.
TEST_F(UnevenData, JoinRunsAsPyTorchRunsItAndMomentumPartsTheRanks) {
  for (const char* impl : {"bucketed", "c10d"}) {
    for (const char* momentum : {"0", "0.9"}) {
      const std::string out = path(std::string("join-") + impl + momentum);
      const auto r =
          ddpbench({"run", "--scenario", "uneven_data", "--gpus", "3", "--modes", "single,ddp",
                    "--ddp-impl", impl, "--dtype", "float64", "--check-only", "--export-batches",
                    "--out", out, "OPTIM.MOMENTUM", momentum});
      const bool stateful = std::string(momentum) != "0";
      ASSERT_EQ(r.exit_code, stateful ? 1 : 0) << impl << momentum << "\n" << r.out << r.err;
      const auto report = read_json(out + "/report.json");
      const auto ranks = find_check(report, "ddp", "ranks_bitwise_equal");
      EXPECT_EQ(ranks.at("status"), stateful ? "fail" : "pass") << impl << momentum;
      if (stateful) {
        EXPECT_EQ(ranks.at("step"), 6) << ranks.dump();
        const std::string causes = result_of(report, "ddp").at("reference").at("causes").dump();
        EXPECT_NE(causes.find("Join with optimizer state (not modelled"), std::string::npos)
            << causes;
      }
      const auto oracle = oracle_check(out, "state_ddp.pt");
      EXPECT_EQ(oracle.exit_code, 0) << impl << momentum << oracle.out << oracle.err;
    }
  }
}

// zero at stage 1 is PyTorch's ZeroRedundancyOptimizer under DDP, whose join hook steps the
// joined rank's shard with the gradients its last step left (Note [PyTorch's Join, as it runs]):
// PyTorch's own (the oracle under Join, within 1e-12), and a FAIL from the first joined step on,
// with the cause named. Stage 2 is not PyTorch's: its joined rank reduces zeros and steps the
// average (Note [A joined zero rank]), and passes; a join fault there still fails.
TEST_F(UnevenData, ZeroStageOneJoinsAsPyTorchAndStageTwoContributesZeros) {
  const std::string one = path("zero1");
  const auto r1 = ddpbench({"run", "--scenario", "uneven_data", "--gpus", "3", "--modes",
                            "single,zero", "--zero-stage", "1", "--dtype", "float64",
                            "--check-only", "--export-batches", "--out", one});
  EXPECT_EQ(r1.exit_code, 1) << r1.out << r1.err;
  const auto report1 = read_json(one + "/report.json");
  // Free-running, the stale update of step 5 shows in step 6's loss.
  EXPECT_EQ(result_of(report1, "zero").at("first_divergence").at("step"), 6) << r1.out;
  EXPECT_NE(result_of(report1, "zero")
                .at("reference")
                .at("causes")
                .dump()
                .find("Join under ZeroRedundancyOptimizer"),
            std::string::npos);
  const auto oracle = oracle_check(one, "state_zero.pt", /*zero=*/true);
  EXPECT_EQ(oracle.exit_code, 0) << oracle.out << oracle.err;

  const std::string two = path("zero2");
  const auto r2 = ddpbench({"run", "--scenario", "uneven_data", "--gpus", "3", "--modes",
                            "single,ddp,zero", "--zero-stage", "2", "--dtype", "float64",
                            "--check-only", "--drop-last", "--out", two});
  ASSERT_EQ(r2.exit_code, 0) << r2.out << r2.err;
  const auto report2 = read_json(two + "/report.json");
  for (const char* check : {"gradients", "parameters", "matches_ddp", "ranks_bitwise_equal"}) {
    EXPECT_EQ(find_check(report2, "zero", check).at("status"), "pass") << check;
  }
  const auto f = ddpbench({"run", "--scenario", "uneven_data", "--gpus", "3", "--modes",
                           "single,zero", "--zero-stage", "2", "--dtype", "float64", "--check-only",
                           "--inject-fault", "join:rank=0,step=5", "--out", path("zero-join")});
  EXPECT_EQ(f.exit_code, 1) << f.out << f.err;
  const auto g = find_check(read_json(path("zero-join") + "/report.json"), "zero", "gradients");
  EXPECT_EQ(g.at("status"), "fail");
  EXPECT_EQ(g.at("step"), 5);
}

// BatchNorm inside Join (Note [PyTorch's Join, as it runs]): every forward starts from the
// highest training rank's statistics and a joined rank receives them; Join's end gives every rank
// that rank's. tiny_resnet on 40 images, 7,7,6 per rank: ranks 0 and 1 join on step 2 of each
// 3-step epoch. Plain SGD (no optimizer state to go stale). float32 lockstep and float64 pass
// against the reference that keeps those statistics, float64 is PyTorch's DDP under Join bit for
// bit, and a rank that keeps its own buffers instead of the broadcast fails.
TEST_F(UnevenData, BatchNormInsideJoinIsJudgedAndIsPyTorchsBitForBit) {
  const std::string data = path("cifar");
  testing::write_cifar_batch(data, 40, 13);
  const auto run = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {"run",
                                     "--scenario",
                                     "tiny_resnet",
                                     "--data-dir",
                                     data,
                                     "--gpus",
                                     "3",
                                     "--batch-size",
                                     "20",
                                     "--steps",
                                     "6",
                                     "--modes",
                                     "single,ddp",
                                     "--check-only",
                                     "--out",
                                     path(name),
                                     "OPTIM.MOMENTUM",
                                     "0",
                                     "OPTIM.NESTEROV",
                                     "false"};
    args.insert(args.end(), extra.begin(), extra.end());
    return ddpbench(args);
  };
  for (const char* impl : {"bucketed", "c10d"}) {
    const auto f64 = run(std::string("bn64") + impl,
                         {"--ddp-impl", impl, "--dtype", "float64", "--export-batches"});
    ASSERT_EQ(f64.exit_code, 0) << impl << "\n" << f64.out << f64.err;
    const auto oracle = oracle_check(path(std::string("bn64") + impl), "state_ddp.pt");
    EXPECT_EQ(oracle.exit_code, 0) << impl << oracle.out << oracle.err;
  }
  const auto f32 = run("bn32", {});
  ASSERT_EQ(f32.exit_code, 0) << f32.out << f32.err;
  const auto report = read_json(path("bn32") + "/report.json");
  EXPECT_EQ(find_check(report, "ddp", "buffers").at("status"), "pass");
  EXPECT_NE(result_of(report, "ddp")
                .at("reference")
                .at("causes")
                .dump()
                .find("inside Join every forward starts from the BatchNorm statistics"),
            std::string::npos);
  const auto fault =
      run("bnfault", {"--dtype", "float64", "--inject-fault", "buffers:rank=1,step=2"});
  EXPECT_EQ(fault.exit_code, 1) << fault.out << fault.err;
  const auto broken =
      find_check(read_json(path("bnfault") + "/report.json"), "ddp", "ranks_buffers_equal");
  EXPECT_EQ(broken.at("status"), "fail");
  EXPECT_EQ(broken.at("step"), 2);
}

TEST_F(UnevenData, WhatCannotBeJudgedIsRefused) {
  const std::string data = path("cifar");
  testing::write_cifar_batch(data, 40, 13);  // 14 per rank: 7,7,6 gives ranks 2, 2 and 3 batches
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  const std::vector<Case> cases = {
      {{"--scenario", "uneven_data", "--gpus", "3", "--batch-size", "2"},
       "leaves some of the 3 ranks without a sample"},
      {{"--scenario", "uneven_data", "--gpus", "3", "--inject-fault", "join:rank=0,step=4"},
       "rank 0 still has a batch at step 4"},
      {{"--scenario", "uneven_data", "--gpus", "3", "--inject-fault", "join:rank=2,step=5"},
       "rank 2 never runs out"},
      {{"--scenario", "uneven_data", "--gpus", "3", "--modes", "single,zero", "--zero-stage", "3"},
       "which zero stage 3 does not model (PyTorch's FSDP has no Join either)"},
      {{"--scenario", "cifar_resnet18", "--data-dir", data, "--gpus", "3", "--batch-size", "20",
        "--steps", "3", "--modes", "single,zero"},
       "zero does not model a joined rank's buffers"},
      {{"--scenario", "cifar_resnet18", "--data-dir", data, "--gpus", "3", "--batch-size", "20",
        "--steps", "3", "--sync-bn"},
       "a joined rank runs no SyncBN collective"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.insert(args.end(), {"--out", path("refused")});
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("refused")));
  }
}

}  // namespace
}  // namespace ddpbench
