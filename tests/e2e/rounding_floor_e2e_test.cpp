// rounding_floor_e2e_test.cpp — no false FAIL on the user's model (issue 50), on models the suite
// scripts at test time (tests/support/script_test_models.py --floor): torchvision's
// shufflenet_v2_x0_5 (channel shuffle, depthwise convolutions, BatchNorm over 2x2 and 1x1 maps)
// at world 3 with 2 samples per rank in float32 and 4 in float64, mobilenet_v3_small
// (squeeze-and-excitation) at world 2, mnasnet0_5 whose evaluation loss is not finite, and small
// models that draw noise in eval mode, keep dropout on in eval, or update a buffer in forward.
// Each correct run passes (its checks pass or say what they could not judge), and the same run
// with a 1e-3 gradient fault on one rank FAILs on the gradients of the faulted tensor. ddp and zero
// without single are judged against each other in lockstep, and an explicit --comparison that
// cannot be honoured is refused. Note [Rounding floor measured on the model].
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "support/cli_runner.h"
#include "support/script_test_models.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
using testing::ddpbench;
using testing::find_check;
using testing::read_json;

struct FloorCase {
  const char* name;
  std::vector<std::string> args;        // the model, its data, world, batch, dtype
  const char* fault_tensor;             // where a 1e-3 fault on rank 1 at step 1 must be seen
  const char* modes = "single,dp,ddp";  // the passing run's (the larger models: single,ddp)
  // Whether the fault moves the averaged gradient beyond the limit on every build, so that the
  // gradients check sees it; else the run may instead FAIL as an unseen fault (injected_fault),
  // naming the tensor.
  bool seen_on_gradients = true;
};

void PrintTo(const FloorCase& c, std::ostream* os) { *os << c.name; }

std::vector<std::string> image_model(const std::string& file) {
  return {"--model", file, "--input-shape", "3,32,32", "--num-classes", "10"};
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<FloorCase>& floor_cases() {
  static const std::vector<FloorCase> cases = {
      {"ShufflenetFloat32TwoPerRank",
       joined(image_model("shufflenet_v2_x0_5.pt"),
              {"--gpus", "3", "--batch-size", "6", "--eval-size", "0"}),
       // BatchNorm over 2 values per channel (1x1 maps, 2 samples per rank) outputs +-1 whatever
       // its input, which leaves rank 1's gradients upstream of it near zero: a 1e-3 fault moves
       // the average by about the limit (1.13's instance: 3.2e-5 against 2e-5, seen; 2.11's:
       // 1.1e-5, unseen).
       "fc.weight", "single,ddp", false},
      {"ShufflenetFloat64FourPerRank",
       joined(image_model("shufflenet_v2_x0_5.pt"),
              {"--gpus", "3", "--batch-size", "12", "--dtype", "float64", "--eval-size", "0"}),
       "fc.weight", "single,dp,ddp"},
      {"MobilenetV3Float32",
       joined(image_model("mobilenet_v3_small.pt"),
              {"--gpus", "2", "--batch-size", "8", "--eval-size", "0"}),
       "features.0.0.weight", "single,ddp"},
      {"NoiseInEvalMode", joined(image_model("noise.pt"), {"--gpus", "2", "--batch-size", "8"}),
       "conv.weight"},
      {"DropoutInEvalMode",
       joined(image_model("mc_dropout.pt"), {"--gpus", "2", "--batch-size", "8"}), "conv.weight"},
      {"BufferUpdatedInForward",
       joined(image_model("input_mean.pt"), {"--gpus", "2", "--batch-size", "8"}), "conv.weight"},
  };
  return cases;
}

class RoundingFloor : public testing::TempDirTest {
 protected:
  static void SetUpTestSuite() {
    models_ = new std::string(testing::make_script_test_models(testing::ScriptTestModels::kFloor));
  }
  static void TearDownTestSuite() { delete models_; }

  // `args` with the model file made absolute.
  testing::ProcessResult run(const std::string& out, std::vector<std::string> args) {
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--model") args[i + 1] = *models_ + "/" + args[i + 1];
    }
    std::vector<std::string> full = {"run",     "--steps", "2",      "--check-only",
                                     "--quiet", "--out",   path(out)};
    full.insert(full.end(), args.begin(), args.end());
    return ddpbench(full);
  }

  static std::string* models_;
};
std::string* RoundingFloor::models_ = nullptr;

class RoundingFloorModels : public RoundingFloor,
                            public ::testing::WithParamInterface<FloorCase> {};

TEST_P(RoundingFloorModels, ACorrectRunPassesAndAFaultOnOneRankFails) {
  const FloorCase& c = GetParam();
  const auto r = run("pass", joined(c.args, {"--modes", c.modes}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("pass") + "/report.json");
  EXPECT_EQ(report.at("verdict"), "pass");
  for (const auto& result : report.at("results")) {
    for (const auto& check : result.at("checks")) {
      const std::string status = check.at("status");
      EXPECT_TRUE(status == "pass" || status == "not_comparable")
          << result.at("mode") << " " << check.at("name") << ": " << status;
    }
  }
  if (c.fault_tensor == nullptr) return;
  const auto f =
      run("fault",
          joined(c.args, {"--modes", "single,ddp", "--inject-fault",
                          std::string("grad:rank=1,step=1,eps=1e-3,tensor=") + c.fault_tensor}));
  EXPECT_EQ(f.exit_code, 1) << f.out << f.err;
  const auto faulted = read_json(path("fault") + "/report.json");
  if (!c.seen_on_gradients && find_check(faulted, "ddp", "gradients").at("status") != "fail") {
    const auto unseen = find_check(faulted, "ddp", "injected_fault");
    EXPECT_EQ(unseen.at("status"), "fail") << f.out;
    EXPECT_EQ(unseen.at("tensor"), c.fault_tensor) << f.out;
    return;
  }
  EXPECT_EQ(find_check(faulted, "ddp", "gradients").at("status"), "fail") << f.out;
  EXPECT_NE(f.out.find(std::string("step 1, gradients of ") + c.fault_tensor), std::string::npos)
      << f.out;
}

INSTANTIATE_TEST_SUITE_P(Scripted, RoundingFloorModels, ::testing::ValuesIn(floor_cases()),
                         [](const ::testing::TestParamInfo<FloorCase>& info) {
                           return std::string(info.param.name);
                         });

// mnasnet0_5's BatchNorm running statistics from 4 samples per rank send the single-device
// evaluation of ddp's weights to inf or NaN: nothing to judge ddp's evaluation against, which is
// no failure of ddp's.
TEST_F(RoundingFloor, AnEvaluationWhoseReferenceIsNotFiniteIsNotJudged) {
  const auto r = run(
      "eval", joined(image_model("mnasnet0_5.pt"), {"--gpus", "3", "--batch-size", "12",
                                                    "--eval-size", "16", "--modes", "single,ddp"}));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto check = find_check(read_json(path("eval") + "/report.json"), "ddp", "evaluation");
  EXPECT_EQ(check.at("status"), "not_comparable") << check.dump();
  EXPECT_NE(check.at("detail").get<std::string>().find("the reference's evaluation loss is not "
                                                       "finite"),
            std::string::npos)
      << check.dump();
}

// BatchNorm over 2 samples per rank compounds rounding between ddp and zero when each trains its
// own trajectory (issue 50's battery: 2.5e-4 against 2e-5); in lockstep both take every step from
// the exact reference's state, and a fault that goes into both alike, which comparing them cannot
// see, fails as unseen.
TEST_F(RoundingFloor, DdpAndZeroWithoutSingleAreJudgedInLockstep) {
  const std::vector<std::string> args = {"--scenario",   "tiny_resnet", "--gpus",      "3",
                                         "--batch-size", "6",           "--modes",     "ddp,zero",
                                         "--zero-stage", "2",           "--eval-size", "0"};
  const auto r = run("pair", args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("pair") + "/report.json");
  EXPECT_EQ(report.at("config").at("comparison"), "lockstep");
  EXPECT_EQ(find_check(report, "zero", "matches_ddp").at("status"), "pass");
  // A grad fault goes into ddp and zero alike, which matches_ddp cannot tell apart: refused
  // without a reference (Note [A fault needs a judge that can see it]); under --trace it runs and
  // FAILs with injected_fault.
  const auto refused_fault =
      run("refused_fault", joined(args, {"--inject-fault", "grad:rank=1,step=1,eps=1e-3"}));
  EXPECT_EQ(refused_fault.exit_code, 2) << refused_fault.out << refused_fault.err;
  EXPECT_NE(refused_fault.err.find("add single to --modes"), std::string::npos)
      << refused_fault.err;
  const auto f =
      run("fault", joined(args, {"--inject-fault", "grad:rank=1,step=1,eps=1e-3", "--trace"}));
  EXPECT_EQ(f.exit_code, 1) << f.out << f.err;
  EXPECT_EQ(
      find_check(read_json(path("fault") + "/report.json"), "zero", "injected_fault").at("status"),
      "fail");
  // Nothing to start a step from: refused, not quietly free-running.
  const auto refused = run("refused", {"--scenario", "toy_cnn", "--gpus", "2", "--modes", "ddp",
                                       "--comparison", "lockstep"});
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("--comparison lockstep"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace ddpbench
