// fault_detection_e2e_test.cpp — `--inject-fault grad` must never leave a run that says PASS
// (the hostile-user battery's defect 15; training/fault_detection.h, Note [Detectable faults]). An
// eps below what the run's gradient tolerance can see is refused before training (exit 2, one line
// naming the eps, the tolerance and the smallest eps the run detects): plain float32 and with an
// fp16 comm hook, which widens the tolerance past the default eps. A fault that passes that test
// but changes nothing (its tensor has no gradient at its step) fails the run with the
// `injected_fault` check instead of passing; a fault that is caught gets no such check.
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

class FaultDetection : public testing::TempDirTest {};

TEST_F(FaultDetection, AnEpsBelowTheGradientToleranceIsRefusedBeforeTraining) {
  struct Case {
    std::vector<std::string> extra;
    std::vector<const char*> named;  // the eps, the tolerance, the smallest detectable eps
  };
  for (const Case& c :
       {Case{{"--inject-fault", "grad:rank=1,step=1,eps=1e-7"}, {"eps 1e-07", "2e-05", "4e-05"}},
        Case{{"--inject-fault", "grad:rank=1,step=1", "--comm-hook", "fp16"},
             {"eps 0.001", "0.00390625", "0.0078125", "--comm-hook fp16"}}}) {
    std::vector<std::string> args = {"run", "--scenario", "linear_mse", "--gpus",
                                     "2",   "--modes",    "single,ddp", "--steps",
                                     "2",   "--out",      path("o")};
    args.insert(args.end(), c.extra.begin(), c.extra.end());
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << c.extra[1] << "\n" << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    for (const char* n : c.named) EXPECT_NE(r.err.find(n), std::string::npos) << n << r.err;
    EXPECT_FALSE(fs::exists(path("o")));
  }
}

TEST_F(FaultDetection, AFaultNoCheckCaughtFailsTheRunInsteadOfPassing) {
  // unused_params: no sample takes head_b at step 0, so rank 1's gradient of it is zero there and
  // scaling it changes nothing; every comparison passes.
  const auto r =
      ddpbench({"run", "--scenario", "unused_params", "--gpus", "2", "--modes", "single,ddp",
                "--steps", "2", "--find-unused-parameters", "--check-only", "--inject-fault",
                "grad:rank=1,step=0,tensor=head_b.weight", "--out", path("o")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto report = read_json(path("o") + "/report.json");
  EXPECT_FALSE(report.at("passed").get<bool>());
  EXPECT_EQ(find_check(report, "ddp", "gradients").at("status"), "pass");
  const auto c = find_check(report, "ddp", "injected_fault");
  EXPECT_EQ(c.at("status"), "fail");
  EXPECT_NE(c.at("detail").get<std::string>().find(
                "the injected fault grad:rank=1,step=0,eps=0.001,tensor=head_b.weight was not "
                "detected"),
            std::string::npos)
      << c.dump();
  EXPECT_NE(r.out.find("FAIL"), std::string::npos) << r.out;
}

TEST_F(FaultDetection, ACaughtFaultFailsItsGradientCheckAlone) {
  const auto r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--modes",
                           "single,ddp", "--steps", "2", "--check-only", "--inject-fault",
                           "grad:rank=1,step=1", "--out", path("o")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto report = read_json(path("o") + "/report.json");
  EXPECT_EQ(find_check(report, "ddp", "gradients").at("status"), "fail");
  for (const auto& check : report.at("results")[1].at("checks")) {
    EXPECT_NE(check.at("name"), "injected_fault") << check.dump();
  }
}

}  // namespace
}  // namespace ddpbench
