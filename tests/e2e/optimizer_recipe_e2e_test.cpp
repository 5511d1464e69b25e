// optimizer_recipe_e2e_test.cpp — the recipe of issue 76 through the binary on toy_cnn (biases,
// two convolutions, three linear layers): AdamW with nanoGPT's two parameter groups (weight decay
// 0 on every 1-D tensor), linear warmup then cosine stepped per optimizer step, clip_grad_norm_,
// label smoothing 0.1 and gradient accumulation. Every mode passes in float32 lockstep (zero at
// stage 3; gpt_tiny_e2e_test.cpp adds float64, c10d, bf16 and HSDP); the `decay` and `sched`
// faults FAIL naming a tensor and a step; they are refused where nothing could see them; a resumed
// run continues the schedule bit for bit; PyTorch (torch.optim.AdamW with the same groups and
// nanoGPT's get_lr, StepLR or OneCycleLR) agrees in float64: DDP, ZeroRedundancyOptimizer, and on
// torch 2.6+ FSDP2 and HSDP.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
using testing::ddpbench;
using testing::find_check;
using testing::read_json;

// The recipe, as scenario keys after the run's flags.
const std::vector<std::string> kRecipe = {"OPTIM.NAME",
                                          "adamw",
                                          "OPTIM.BASE_LR",
                                          "0.003",
                                          "OPTIM.WEIGHT_DECAY",
                                          "0.1",
                                          "OPTIM.NO_DECAY",
                                          "1d",
                                          "OPTIM.NO_DECAY_LR_SCALE",
                                          "0.5",
                                          "OPTIM.BETA2",
                                          "0.95",
                                          "SCHED.NAME",
                                          "warmup_cosine",
                                          "SCHED.WARMUP_STEPS",
                                          "1",
                                          "SCHED.DECAY_STEPS",
                                          "3",
                                          "SCHED.MIN_LR",
                                          "0.0003",
                                          "OPTIM.CLIP_GRAD_NORM",
                                          "1.0",
                                          "LOSS.LABEL_SMOOTHING",
                                          "0.1"};

// `keys` with `key`'s value replaced.
std::vector<std::string> with_key(std::vector<std::string> keys, const std::string& key,
                                  const std::string& value) {
  for (size_t i = 0; i + 1 < keys.size(); i += 2) {
    if (keys[i] == key) keys[i + 1] = value;
  }
  return keys;
}

class OptimizerRecipeE2E : public testing::TempDirTest {
 protected:
  // toy_cnn, 4 checked steps of a global batch of 4 per rank on `gpus` ranks, the recipe's keys
  // last.
  testing::ProcessResult run(const std::string& out, std::vector<std::string> flags,
                             std::vector<std::string> keys = kRecipe, int gpus = 2) {
    std::vector<std::string> args = testing::short_checked_run("toy_cnn", gpus, 4, 4, out);
    args.insert(args.end(), {"--eval-size", "0"});
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), keys.begin(), keys.end());
    return ddpbench(args);
  }
};

TEST_F(OptimizerRecipeE2E, EveryModePassesWithAdamWGroupsWarmupCosineClippingAndAccumulation) {
  // One run of every mode (gpt_tiny's tests add float64, c10d, bf16 and HSDP with the recipe).
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"f32", {"--modes", "single,dp,ddp,zero", "--zero-stage", "3", "--accumulation-steps", "2"}},
  };
  for (const auto& [name, flags] : runs) {
    const auto r = run(path(name), flags);
    ASSERT_EQ(r.exit_code, 0) << name << "\n" << r.out << r.err;
    const auto report = read_json(path(name) + "/report.json");
    EXPECT_TRUE(report.at("passed").get<bool>()) << name;
    const std::string optimizer = report.at("config").at("optimizer");
    EXPECT_EQ(optimizer,
              "AdamW(lr=0.003, betas=(0.9, 0.95), eps=1e-08, weight_decay=0.1) with "
              "weight_decay=0 and lr x 0.5 for [1d] + warmup 1 steps + cosine to min_lr=0.0003 "
              "at step 3 + clip_grad_norm_(max_norm=1)")
        << name;
    EXPECT_EQ(report.at("config").at("loss"), "CrossEntropyLoss(label_smoothing=0.1)") << name;
  }
}

// float32 lockstep. The decay fault moves a 1-D tensor (the no-decay group) on one rank; the sched
// fault steps one rank with the next step's rate. In ddp the ranks part (ranks_bitwise_equal),
// in zero the owner's update differs from the reference's (updates); each names step 1, and
// decay a bias. A 1e-3 gradient error on one rank fails the gradients check of both modes.
TEST_F(OptimizerRecipeE2E, TheDecaySchedAndGradFaultsFail) {
  struct Case {
    std::string fault, mode, check;
  };
  // decay in ddp and sched in zero: GptTinyE2E.
  const std::vector<Case> cases = {{"decay:rank=1,step=1", "zero", "updates"},
                                   {"sched:rank=1,step=1", "ddp", "ranks_bitwise_equal"}};
  for (const Case& c : cases) {
    const std::string out = path(c.fault.substr(0, 5) + c.mode);
    const auto r = run(out, {"--modes", "single," + c.mode, "--inject-fault", c.fault});
    ASSERT_EQ(r.exit_code, 1) << c.fault << "\n" << r.out << r.err;
    const auto check = find_check(read_json(out + "/report.json"), c.mode, c.check);
    EXPECT_EQ(check.at("status"), "fail") << c.fault << " " << c.mode;
    EXPECT_EQ(check.at("step"), 1) << c.fault << " " << c.mode << check.dump();
    if (c.fault.rfind("decay", 0) == 0) {
      EXPECT_EQ(check.at("tensor"), "conv1.bias") << c.mode;  // toy_cnn's first 1-D tensor
    }
  }
  const auto r = run(path("grad"), {"--modes", "single,ddp,zero", "--inject-fault",
                                    "grad:rank=1,step=2,eps=0.001"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  for (const char* mode : {"ddp", "zero"}) {
    const auto check = find_check(read_json(path("grad") + "/report.json"), mode, "gradients");
    EXPECT_EQ(check.at("status"), "fail") << mode;
    EXPECT_EQ(check.at("step"), 2) << mode;
  }
}

TEST_F(OptimizerRecipeE2E, FaultsNothingCouldSeeAreRefused) {
  // A constant rate: sched changes nothing. No no-decay group: decay changes nothing.
  auto r = run(path("const"), {"--modes", "single,ddp", "--inject-fault", "sched:rank=1,step=1"},
               {"OPTIM.NAME", "adamw"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("gives steps 1 and 2 the same rate"), std::string::npos) << r.err;
  r = run(path("groups"), {"--modes", "single,ddp", "--inject-fault", "decay:rank=1,step=1"},
          {"OPTIM.NAME", "adamw", "OPTIM.WEIGHT_DECAY", "0.1"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("has no such group"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("groups")));
  r = run(path("short"), {"--modes", "single"},
          {"SCHED.NAME", "onecycle", "SCHED.TOTAL_STEPS", "3", "SCHED.PCT_START", "0.5"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("SCHED.TOTAL_STEPS 3 is shorter than this run's 4 steps"), std::string::npos)
      << r.err;
  r = run(path("cos"), {"--modes", "single"},
          {"SCHED.NAME", "warmup_cosine", "SCHED.WARMUP_STEPS", "3", "SCHED.DECAY_STEPS", "3"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("SCHED.DECAY_STEPS (3) must be above SCHED.WARMUP_STEPS (3)"),
            std::string::npos)
      << r.err;
}

// The schedule is a function of the run-global step: resumed at step 2 of 4, the run ends in
// the uninterrupted run's bytes (and a checkpoint's param_groups carry both groups).
TEST_F(OptimizerRecipeE2E, AResumedRunContinuesTheScheduleBitForBit) {
  auto r = run(path("full"), {"--modes", "ddp", "--checkpoint-every", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = run(path("resumed"),
          {"--modes", "ddp", "--resume", path("full") + "/checkpoint_ddp_step2.pt"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(testing::bytes_of(path("resumed") + "/state_ddp.pt"),
            testing::bytes_of(path("full") + "/state_ddp.pt"));
  // Resumed with a schedule one step behind (decay at 4, not 3), it ends elsewhere.
  const std::vector<std::string> other = with_key(kRecipe, "SCHED.DECAY_STEPS", "4");
  r = run(path("other"), {"--modes", "ddp", "--resume", path("full") + "/checkpoint_ddp_step2.pt"},
          other);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(testing::bytes_of(path("other") + "/state_ddp.pt"),
            testing::bytes_of(path("full") + "/state_ddp.pt"));
  const auto groups = testing::python(
      {"-c",
       "import sys, torch; g = torch.load(sys.argv[1])['optimizer']['param_groups']; "
       "print(len(g), len(g[0]['params']), len(g[1]['params']), g[1]['weight_decay'])",
       path("full") + "/checkpoint_ddp_step2.pt"});
  EXPECT_EQ(groups.out, "2 5 5 0.0\n") << groups.out << groups.err;
}

// PyTorch on the exported batches in float64: torch.optim.AdamW over the same two groups,
// nanoGPT's get_lr before each step (or torch's StepLR or OneCycleLR after it),
// clip_grad_norm_(1.0), label smoothing: DDP (bit for bit on torch 1.13, reports/METRICS.md; 1e-12
// here so that the torch 2.x suite, whose AdamW rounds its first moment through lerp_, holds too);
// zero stage 1 against ZeroRedundancyOptimizer; with torch 2.6 or later, zero stage 3 against
// FSDP2's fully_shard and HSDP (2, 2) against fully_shard on a (2, 2) mesh.
TEST_F(OptimizerRecipeE2E, TorchOraclesAgreeInFloat64) {
  std::vector<std::string> step_lr = with_key(kRecipe, "SCHED.NAME", "step");
  step_lr.insert(step_lr.end(), {"SCHED.STEP_SIZE", "2", "SCHED.GAMMA", "0.5"});
  std::vector<std::string> one_cycle = with_key(kRecipe, "SCHED.NAME", "onecycle");  // beta1 too
  one_cycle.insert(one_cycle.end(), {"SCHED.TOTAL_STEPS", "5", "SCHED.PCT_START", "0.5"});
  const bool fsdp =
      testing::python({"-c", "from torch.distributed.fsdp import fully_shard"}).exit_code == 0;
  struct Oracle {
    std::string name;
    std::vector<std::string> flags;
    std::vector<std::string> keys;
    int gpus;
    std::string oracle_flag;  // torch_ddp_oracle.py's
    std::string state;        // the mode's state file
  };
  // DDP at world 3 (gloo's ring sums in chunks there); the schedules and zero at 2 (single
  // device: GptTinyE2E), which keeps the suite short.
  std::vector<Oracle> oracles = {
      {"ddp", {"--modes", "ddp"}, kRecipe, 3, "", "ddp"},
      {"steplr", {"--modes", "ddp"}, step_lr, 2, "", "ddp"},
      {"onecycle", {"--modes", "ddp"}, one_cycle, 2, "", "ddp"},
      {"zero1", {"--modes", "zero"}, kRecipe, 2, "--zero", "zero"},
  };
  if (fsdp) {
    oracles.push_back(
        {"zero3", {"--modes", "zero", "--zero-stage", "3"}, kRecipe, 3, "--fsdp", "zero"});
    oracles.push_back({"hsdp",
                       {"--modes", "zero", "--zero-stage", "3", "--shard-group", "2"},
                       kRecipe,
                       4,
                       "--fsdp",
                       "zero"});
  }
  for (const Oracle& o : oracles) {
    const std::string dir = path(o.name);
    std::vector<std::string> flags = o.flags;
    flags.insert(flags.end(), {"--dtype", "float64", "--export-batches"});
    const auto r = run(dir, flags, o.keys, o.gpus);
    ASSERT_EQ(r.exit_code, 0) << o.name << "\n" << r.out << r.err;
    const auto got = testing::torch_oracle_check(dir, o.state, o.oracle_flag, "1e-12");
    EXPECT_EQ(got.exit_code, 0) << o.name << "\n" << got.out << got.err;
    EXPECT_NE(got.out.find("OK"), std::string::npos) << o.name << got.out;
  }
}

}  // namespace
}  // namespace ddpbench
