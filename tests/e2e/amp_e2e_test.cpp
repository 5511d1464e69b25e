// amp_e2e_test.cpp — --amp end to end (issue 34): under autocast every mode is judged against an
// exact reference that rounds each rank's gradients as the mode does, and still fails on a 1e-2
// gradient fault; fp16 with its GradScaler skips the same steps in every mode and rank, and a
// rank whose scale diverges is named; SyncBN under autocast, free-running and --bisect are judged
// (issue 55); what cannot be judged is refused. toy_cnn, a few steps:
// the smallest model with convolutions and a classifier that autocast lowers. (Against PyTorch's
// own DDP and single-device training under autocast: amp_oracle_e2e_test.cpp.)
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "support/amp_e2e_fixture.h"
#include "support/cli_runner.h"

namespace ddpbench {
namespace {
using testing::ddpbench;
using testing::find_check;
using testing::read_json;

using testing::cpu_fp16_supported;

TEST_F(AmpE2E, Bf16EveryModePassesAgainstItsExactReferenceAtWorldTwoAndThree) {
  for (const char* world : {"2", "3"}) {
    const auto report =
        run_amp(std::string("bf16-") + world,
                {"--amp", "bf16", "--gpus", world, "--modes", "single,dp,ddp", "--steps", "4"});
    EXPECT_TRUE(report.at("passed").get<bool>()) << world << last_.out;
    EXPECT_EQ(report.at("config").at("amp"), "bf16");
    EXPECT_NE(last_.out.find("float32 under autocast bf16"), std::string::npos) << last_.out;
    for (const char* mode : {"dp", "ddp"}) {
      EXPECT_EQ(find_check(report, mode, "gradients").at("status"), "pass") << world << mode;
      EXPECT_EQ(find_check(report, mode, "updates").at("status"), "pass") << world << mode;
    }
    // The reference rounds each chunk's gradients on their own: without that, splitting the
    // batch moves bf16 gradients by ~1e-2 (measured), which would hide the fault below.
    std::string causes;
    for (const auto& r : report.at("results")) {
      if (r.at("mode") == "ddp") causes = r.at("reference").at("causes").dump();
    }
    EXPECT_NE(causes.find("Mixed precision: under autocast to bf16 each rank"), std::string::npos)
        << causes;
    // What autocast changed, per mode, against float32 steps from the same state: bf16 keeps 8
    // bits, so every mode's updates and losses move (0 would mean the float32 step autocast too),
    // and by far less than the step itself.
    for (const auto& r : report.at("results")) {
      const auto& amp = r.at("amp_vs_float32");
      EXPECT_EQ(amp.at("steps"), 4) << world << r.at("mode");
      EXPECT_GT(amp.at("update_error").get<double>(), 1e-5) << world << r.at("mode");
      EXPECT_LT(amp.at("update_error").get<double>(), 0.5) << world << r.at("mode");
      EXPECT_GT(amp.at("loss_rel_error").get<double>(), 0.0) << world << r.at("mode");
      EXPECT_LT(amp.at("loss_rel_error").get<double>(), 0.05) << world << r.at("mode");
    }
    EXPECT_NE(last_.out.find("autocast bf16 against float32 from the same state, 4 step(s)"),
              std::string::npos)
        << last_.out;
  }
}

TEST_F(AmpE2E, Bf16OneRanksGradientOffByOnePercentFails) {
  const auto report = run_amp("bf16-fault",
                              {"--amp", "bf16", "--gpus", "2", "--modes", "single,ddp", "--steps",
                               "3", "--inject-fault", "grad:rank=1,step=1,eps=1e-2"},
                              1);
  EXPECT_FALSE(report.at("passed").get<bool>());
  const auto gradients = find_check(report, "ddp", "gradients");
  EXPECT_EQ(gradients.at("status"), "fail");
  EXPECT_EQ(gradients.at("step"), 1);
}

// Free-running under autocast (Note [Mixed precision free-running], training/
// floor_measurement.h): the cause names the drift model; a 1e-3 fault on one of three ranks
// fails at its step even though the failing check measures the drift floor, and --bisect's
// float64 re-run (autocast dropped) says it persists.
TEST_F(AmpE2E, Bf16FreeRunningPassesWithItsDriftModelAndAFaultFailsAndPersists) {
  const std::vector<std::string> free = {"--amp",   "bf16", "--comparison", "free",
                                         "--gpus",  "3",    "--modes",      "single,ddp",
                                         "--steps", "20",   "--batch-size", "48"};
  const auto report = run_amp("free", free);
  EXPECT_TRUE(report.at("passed").get<bool>()) << last_.out;
  EXPECT_EQ(report.at("config").at("comparison"), "free-running");
  EXPECT_EQ(find_check(report, "ddp", "parameters").at("status"), "pass");
  std::string causes;
  for (const auto& r : report.at("results")) {
    if (r.at("mode") == "ddp") causes = r.at("reference").at("causes").dump();
  }
  EXPECT_NE(causes.find("trajectories drift apart"), std::string::npos) << causes;

  std::vector<std::string> faulty = free;
  faulty.insert(faulty.end(), {"--inject-fault", "grad:rank=1,step=10", "--bisect"});
  const auto failed = run_amp("free-fault", faulty, 1);
  const auto gradients = find_check(failed, "ddp", "gradients");
  EXPECT_EQ(gradients.at("status"), "fail") << last_.out;
  EXPECT_EQ(gradients.at("step"), 10);
  EXPECT_NE(
      last_.out.find("rounding floor measured: a twin of the reference with each rank chunk "
                     "backpropagated on its "
                     "own, the rank gradients summed rank by rank and every entry then moved"),
      std::string::npos)
      << last_.out;
  for (const auto& r : failed.at("results")) {
    if (r.at("mode") != "ddp") continue;
    EXPECT_EQ(r.at("first_divergence").at("bisect"), "persists") << r.dump();
  }
}

// Issue 73, A4: bf16 free-running tiny_resnet at world 3, two samples a rank: a rounding that
// carries a weight across a bf16 boundary parts the trajectories (Note [Parted trajectories]),
// every item after is not comparable, and the run, judged at its first steps only, is NOT JUDGED
// naming the steps it could not judge, in the console and report.json alike (Note [What a mode
// was judged against]). Whether and when a run parts is a draw of the kernels' rounding: 12 steps
// so that it does on both builds (measured on an AMD EPYC without AVX-512, seeds 0-4: 1.13 NOT
// JUDGED 5 of 5, seed 0 judged at 1 step; 2.11 4 of 5, seed 0 at 7, seed 2 a PASS of all 12, ddp
// never leaving its fixed limits; at 6 steps 2.11's seed 0 passed them all).
TEST_F(AmpE2E, AFreeRunningModeWhoseLaterStepsCompareNothingIsNotJudged) {
  const auto report = run_amp("uncovered",
                              {"--amp", "bf16", "--comparison", "free", "--gpus", "3", "--modes",
                               "single,ddp", "--steps", "12", "--batch-size", "6"},
                              0, "tiny_resnet");
  EXPECT_EQ(report.at("verdict"), "not_judged") << last_.out;
  // The steps named are those no per-step check compared anything at.
  std::set<int64_t> judged;
  for (const char* check : {"loss", "gradients"}) {
    const auto c = find_check(report, "ddp", check);  // kept: the loop reads into it
    for (const auto& s : c.at("steps_compared")) judged.insert(s.get<int64_t>());
  }
  ASSERT_LT(judged.size(), 12u) << last_.out;
  const std::string text = report.at("verdict_text");
  EXPECT_NE(
      text.find("ddp: judged at " + std::to_string(judged.size()) + " of its 12 checked steps"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("nothing was compared"), std::string::npos) << text;
  EXPECT_NE(last_.out.find("NOT JUDGED: ddp: judged at"), std::string::npos) << last_.out;
}

// SyncBN under autocast (Note [SyncBN under autocast judged], modes/single/rank_threads.h): each
// rank rounds its own weight gradients while SyncBN normalises over every rank, and the reference
// forwards the chunks at once in threads that meet at every BatchNorm layer. Measured: bit for bit
// at world 2 (tiny_resnet and resnet18_syncbn), 1.7e-7 at world 3 (resnet18_syncbn; tiny_resnet
// 1.1e-7 to 1.2e-7 over seeds 0-2: the allreduce's summation order); a reference on the whole
// batch in SyncBN's arithmetic instead gave 5.6e-3 (a false FAIL). tiny_resnet throughout: the
// world-3 ResNet-18 run took 20 s of this test's 35 s on a CPU without bf16 instructions.
TEST_F(AmpE2E, Bf16SyncBnIsJudgedWithEachRanksRoundingAndEveryRanksStatistics) {
  const auto two = run_amp("syncbn2",
                           {"--amp", "bf16", "--sync-bn", "--gpus", "2", "--modes", "single,ddp",
                            "--steps", "3", "--accumulation-steps", "2"},
                           0, "tiny_resnet");
  EXPECT_TRUE(two.at("passed").get<bool>()) << last_.out;
  EXPECT_EQ(find_check(two, "ddp", "updates").at("max_abs_diff").get<double>(), 0.0);
  std::string causes;
  for (const auto& r : two.at("results")) {
    if (r.at("mode") == "ddp") causes = r.at("reference").at("causes").dump();
  }
  EXPECT_NE(causes.find("the threads meeting at every SyncBN layer"), std::string::npos) << causes;
  const auto three = run_amp("syncbn3",
                             {"--amp", "bf16", "--sync-bn", "--gpus", "3", "--modes", "single,ddp",
                              "--steps", "1", "--batch-size", "12", "--dtype", "float32"},
                             0, "tiny_resnet");
  EXPECT_EQ(find_check(three, "ddp", "gradients").at("status"), "pass") << last_.out;
  // A rank that keeps its own statistics (the syncbn fault) fails.
  const auto fault =
      run_amp("syncbn-fault",
              {"--amp", "bf16", "--sync-bn", "--gpus", "3", "--batch-size", "12", "--modes",
               "single,ddp", "--steps", "3", "--inject-fault", "syncbn:rank=1,step=1"},
              1, "tiny_resnet");
  EXPECT_EQ(find_check(fault, "ddp", "gradients").at("status"), "fail");
}

// Gradient accumulation under autocast: every micro-step casts the weights afresh and rounds its
// own gradients before they are accumulated in float32, so A micro-steps are not one step on the
// whole batch; the reference forwards each rank's micro-batches on their own. grad_accum (an MLP,
// MSE, A = 4): world 1 (micro-steps alone), 2, and 3 with A = 3 (a division by 1/3 that is not
// exact in any precision).
TEST_F(AmpE2E, Bf16GradientAccumulationIsJudgedMicroBatchByMicroBatch) {
  const std::vector<std::vector<std::string>> runs = {
      {"--gpus", "1", "--modes", "single,dp,ddp"},
      {"--gpus", "2", "--modes", "single,dp,ddp"},
      {"--gpus", "3", "--modes", "single,dp,ddp", "--accumulation-steps", "3", "--batch-size",
       "36"},
  };
  for (const auto& run : runs) {
    std::vector<std::string> flags = {"--amp", "bf16", "--steps", "3"};
    flags.insert(flags.end(), run.begin(), run.end());
    const std::string world = run[1];
    const auto report = run_amp("accum-" + world, flags, 0, "grad_accum");
    EXPECT_TRUE(report.at("passed").get<bool>()) << world << last_.out;
    for (const char* mode : {"dp", "ddp"}) {
      EXPECT_EQ(find_check(report, mode, "gradients").at("status"), "pass") << world << mode;
      EXPECT_EQ(find_check(report, mode, "updates").at("status"), "pass") << world << mode;
    }
    for (const auto& r : report.at("results")) {
      if (r.at("mode") == "single") continue;
      EXPECT_NE(r.at("reference").at("name").get<std::string>().find("accumulation micro-batches"),
                std::string::npos)
          << world << r.at("reference");
    }
  }
  // fp16 (2.x): the GradScaler scales each micro-step's loss, and the step is skipped when any
  // micro-step overflowed. Where the overflow falls depends on the mode's arithmetic (measured at
  // 2^20: single and ddp skip step 0, dp none, since DataParallel's replicas backpropagate the
  // gathered loss, K times smaller per sample than a DDP rank's own mean), so each mode's skips
  // are judged against its own reference's.
  if (cpu_fp16_supported()) {
    const auto fp16 = run_amp("accum-fp16",
                              {"--amp", "fp16", "--grad-scaler-init", "1048576", "--gpus", "2",
                               "--modes", "single,dp,ddp", "--steps", "4"},
                              0, "grad_accum");
    EXPECT_TRUE(fp16.at("passed").get<bool>()) << last_.out;
    for (const char* mode : {"dp", "ddp"}) {
      EXPECT_EQ(find_check(fp16, mode, "loss_scale").at("status"), "pass") << mode;
    }
    EXPECT_EQ(find_check(fp16, "ddp", "ranks_scale_equal").at("status"), "pass");
    for (const auto& r : fp16.at("results")) {
      if (r.at("mode") == "ddp") {
        EXPECT_EQ(r.at("skipped_steps"), nlohmann::json::array({0})) << "no forced overflow";
      }
    }
  }
  // Still a verdict: a 1e-2 error in one rank's gradient, and a forgotten 1/A (noscale), fail.
  const auto grad = run_amp("accum-grad-fault",
                            {"--amp", "bf16", "--gpus", "2", "--modes", "single,ddp", "--steps",
                             "3", "--inject-fault", "grad:rank=1,step=1,eps=1e-2"},
                            1, "grad_accum");
  EXPECT_EQ(find_check(grad, "ddp", "gradients").at("status"), "fail") << last_.out;
  EXPECT_EQ(find_check(grad, "ddp", "gradients").at("step"), 1);
  const auto noscale = run_amp("accum-noscale-fault",
                               {"--amp", "bf16", "--gpus", "2", "--modes", "single,dp", "--steps",
                                "3", "--inject-fault", "noscale:step=2"},
                               1, "grad_accum");
  EXPECT_EQ(find_check(noscale, "dp", "gradients").at("status"), "fail") << last_.out;
  EXPECT_EQ(find_check(noscale, "dp", "gradients").at("step"), 2);
}

TEST_F(AmpE2E, Fp16SkipsTheSameStepsEverywhereAndNamesADivergedScale) {
  if (!cpu_fp16_supported()) {
    const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--amp", "fp16", "--out", path("x")});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("libtorch 1.13 has no float16 autocast"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--torch python"), std::string::npos) << r.err;
    GTEST_SKIP() << "float16 on the CPU needs the PyTorch 2.x build; refused here as it must be";
  }
  // A scale of 2^20 overflows float16 in the first two steps (measured), and the halved scale
  // then trains: each mode and rank must skip exactly those.
  const auto report = run_amp("fp16", {"--amp", "fp16", "--grad-scaler-init", "1048576", "--gpus",
                                       "2", "--modes", "single,dp,ddp", "--steps", "6"});
  EXPECT_TRUE(report.at("passed").get<bool>()) << last_.out;
  for (const char* mode : {"dp", "ddp"}) {
    const auto scale = find_check(report, mode, "loss_scale");
    EXPECT_EQ(scale.at("status"), "pass") << mode;
    const std::string detail = scale.at("detail");
    EXPECT_EQ(detail.find(" 0 of 6 steps skipped"), std::string::npos)
        << "the forced overflow did not happen: " << detail;
    EXPECT_EQ(detail.find("6 of 6 steps skipped"), std::string::npos)
        << "nothing trained: " << detail;
  }
  EXPECT_EQ(find_check(report, "ddp", "ranks_scale_equal").at("status"), "pass");
  // The report keeps each mode's scale per step and the steps skipped: the same everywhere.
  const auto& results = report.at("results");
  ASSERT_EQ(results.size(), 3u);
  EXPECT_FALSE(results[0].at("skipped_steps").empty());
  EXPECT_EQ(results[0].at("loss_scales").size(), 6u);
  for (const auto& r : results) {
    EXPECT_EQ(r.at("skipped_steps"), results[0].at("skipped_steps")) << r.at("mode");
    EXPECT_EQ(r.at("loss_scales"), results[0].at("loss_scales")) << r.at("mode");
    // Skipped steps have no update to hold against float32's: only the others are compared.
    EXPECT_EQ(r.at("amp_vs_float32").at("steps").get<size_t>(),
              6 - results[0].at("skipped_steps").size())
        << r.at("mode");
  }

  // An inf in rank 1's gradient before the allreduce reaches every rank: all skip that step, as
  // the references (overflowing there too) do, and the run passes.
  const auto inf = run_amp("fp16-inf", {"--amp", "fp16", "--gpus", "2", "--modes", "single,ddp",
                                        "--steps", "3", "--inject-fault", "inf:rank=1,step=1"});
  EXPECT_TRUE(inf.at("passed").get<bool>()) << last_.out;
  for (const auto& r : inf.at("results")) {
    EXPECT_EQ(r.at("skipped_steps"), nlohmann::json::array({1})) << r.at("mode");
  }
  EXPECT_EQ(find_check(inf, "ddp", "ranks_scale_equal").at("status"), "pass");

  const auto faulty = run_amp("fp16-scaler-fault",
                              {"--amp", "fp16", "--gpus", "2", "--modes", "single,ddp", "--steps",
                               "3", "--inject-fault", "scaler:rank=1,step=1"},
                              1);
  const auto ranks = find_check(faulty, "ddp", "ranks_scale_equal");
  EXPECT_EQ(ranks.at("status"), "fail");
  EXPECT_EQ(ranks.at("step"), 1);
  EXPECT_NE(std::string(ranks.at("detail")).find("rank 1 held GradScaler scale"), std::string::npos)
      << ranks.at("detail");
}

// DDP's fp16 gradient compression (--comm-hook fp16) on top of autocast: judged against the same
// reference within the hook's wire precision, and the 1e-2 fault still fails. Under fp16 the
// compressed buckets hold scaled gradients: an overflow shows as a skipped step, and every mode and
// rank must skip the same ones (2.x: measured at 2^20, steps 0 and 1 in single and ddp alike).
TEST_F(AmpE2E, Fp16CommHookUnderAutocastIsJudgedAndStillCatchesAFault) {
  const auto hooked = run_amp("hook-bf16", {"--amp", "bf16", "--comm-hook", "fp16", "--gpus", "2",
                                            "--modes", "single,ddp", "--steps", "3"});
  EXPECT_TRUE(hooked.at("passed").get<bool>()) << last_.out;
  EXPECT_EQ(hooked.at("config").at("ddp").at("comm_hook"), "fp16");
  const auto faulty =
      run_amp("hook-bf16-fault",
              {"--amp", "bf16", "--comm-hook", "fp16", "--gpus", "2", "--modes", "single,ddp",
               "--steps", "3", "--inject-fault", "grad:rank=1,step=1,eps=1e-2"},
              1);
  EXPECT_EQ(find_check(faulty, "ddp", "gradients").at("status"), "fail");
  EXPECT_EQ(find_check(faulty, "ddp", "gradients").at("step"), 1);
  if (!cpu_fp16_supported()) return;
  const auto scaled =
      run_amp("hook-fp16", {"--amp", "fp16", "--comm-hook", "fp16", "--grad-scaler-init", "1048576",
                            "--gpus", "2", "--modes", "single,ddp", "--steps", "4"});
  EXPECT_TRUE(scaled.at("passed").get<bool>()) << last_.out;
  EXPECT_EQ(find_check(scaled, "ddp", "loss_scale").at("status"), "pass");
  for (const auto& r : scaled.at("results")) {
    EXPECT_EQ(r.at("skipped_steps"), nlohmann::json::array({0, 1})) << r.at("mode");
  }
}

// An fp16 checkpoint holds the GradScaler's state as PyTorch's AMP recipe saves it ("scaler":
// GradScaler.state_dict()): a run resumed from step 2 goes on with the scale the unbroken run had
// there (2^20 halved by the overflows of steps 0 and 1), not the initial one, and ends with the
// same bits; PyTorch's own GradScaler loads the entry. ddp alone: no lockstep, its own trajectory.
TEST_F(AmpE2E, Fp16CheckpointsCarryTheGradScalerAndResumeBitIdentical) {
  if (!cpu_fp16_supported()) GTEST_SKIP() << "float16 on the CPU needs the PyTorch 2.x build";
  const std::vector<std::string> fp16 = {
      "--amp", "fp16", "--grad-scaler-init", "1048576", "--gpus", "2", "--modes", "ddp"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = fp16;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  const auto whole = run_amp("whole", with({"--steps", "4", "--checkpoint-every", "2"}));
  const std::string ckpt = path("whole") + "/checkpoint_ddp_step2.pt";
  const auto resumed = run_amp("resumed", with({"--steps", "4", "--resume", ckpt}));
  const auto& scales = whole.at("results")[0].at("loss_scales");
  ASSERT_EQ(scales.size(), 4u);
  EXPECT_EQ(scales[2], 262144.0);
  EXPECT_EQ(resumed.at("results")[0].at("loss_scales"),
            nlohmann::json::array({scales[2], scales[3]}));
  const auto py = testing::python(
      {"-c",
       "import sys, torch\n"
       "a = torch.load(sys.argv[1]); b = torch.load(sys.argv[2]); c = torch.load(sys.argv[3])\n"
       "assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a), 'states differ'\n"
       "s = torch.amp.GradScaler('cpu'); s.load_state_dict(c['scaler'])\n"
       "print('scale', s.get_scale(), 'tracker', c['scaler']['_growth_tracker'])\n",
       path("whole") + "/state_ddp.pt", path("resumed") + "/state_ddp.pt", ckpt});
  EXPECT_EQ(py.exit_code, 0) << py.out << py.err;
  EXPECT_NE(py.out.find("scale 262144.0 tracker 0"), std::string::npos) << py.out;
}

TEST_F(AmpE2E, WhatCannotBeJudgedIsRefusedWithTheFix) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--amp", "bf16", "--dtype", "float64"}, "drop --dtype float64"},
      {{"--amp", "bf16", "--inject-fault", "scaler:rank=1,step=0"}, "add --amp fp16"},
  };
  for (const auto& [flags, fix] : cases) {
    std::vector<std::string> args = {"run", "--scenario", "toy_cnn",      "--gpus",
                                     "2",   "--out",      path("refused")};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << fix << r.out << r.err;
    EXPECT_NE(r.err.find(fix), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("refused"))) << fix;
  }
}

}  // namespace
}  // namespace ddpbench
