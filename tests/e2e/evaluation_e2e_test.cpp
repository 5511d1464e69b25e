// evaluation_e2e_test.cpp — the evaluation pass end to end (training/evaluation.h): toy_cnn's
// single, dp and ddp evaluations agree with single-device evaluation of the same weights; the
// `eval` fault (a rank, or DP's gather, drops a sample) makes the check FAIL with exit 1,
// in report.json and junit.xml; a held-out set that does not divide by the ranks reports its
// padding duplicates and what they changed; regression scenarios skip the pass with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
using testing::ddpbench;
using testing::find_check;
using testing::read_json;
using testing::result_of;

class EvaluationE2E : public testing::TempDirTest {};

std::string read_text(const std::string& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_F(EvaluationE2E, EveryModeAgreesWithSingleDeviceEvaluationOfItsWeights) {
  const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--modes", "single,dp,ddp", "--gpus",
                           "2", "--steps", "3", "--check-only", "--quiet", "--out", path("ok")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("evaluation pass:"), std::string::npos) << r.out;
  const auto report = read_json(path("ok") + "/report.json");
  for (const char* mode : {"single", "dp", "ddp"}) {
    const auto& e = result_of(report, mode).at("evaluation");
    EXPECT_EQ(e.at("status"), "done") << mode;
    EXPECT_EQ(e.at("samples"), 512) << mode;
    EXPECT_EQ(e.at("count"), 512) << mode << ": 512 divides by 2 ranks";
    EXPECT_EQ(e.at("padded"), 0) << mode;
    EXPECT_GE(e.at("accuracy").get<double>(), 0.0);
    EXPECT_NE(e.at("dataset").get<std::string>().find("held-out"), std::string::npos);
  }
  for (const char* mode : {"dp", "ddp"}) {
    EXPECT_EQ(find_check(report, mode, "evaluation").at("status"), "pass") << mode;
  }
  // The modes evaluated weights trained the same way: their figures agree with single's.
  EXPECT_EQ(result_of(report, "dp").at("evaluation").at("count"),
            result_of(report, "single").at("evaluation").at("count"));
}

TEST_F(EvaluationE2E, ARankLosingItsContributionFailsTheCheck) {
  const auto r =
      ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "2", "--check-only",
                "--quiet", "--inject-fault", "eval:rank=1", "--out", path("bad")});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto report = read_json(path("bad") + "/report.json");
  EXPECT_FALSE(report.at("passed").get<bool>());
  const auto c = find_check(report, "ddp", "evaluation");
  EXPECT_EQ(c.at("status"), "fail");
  EXPECT_NE(c.at("detail").get<std::string>().find("511 samples counted, single-device 512"),
            std::string::npos)
      << c.dump();
  // Training itself was untouched: every other check passes.
  for (const char* check : {"loss", "gradients", "updates", "ranks_bitwise_equal"}) {
    EXPECT_EQ(find_check(report, "ddp", check).at("status"), "pass") << check;
  }
  const std::string junit = read_text(path("bad") + "/report.junit.xml");
  EXPECT_NE(junit.find("name=\"evaluation\""), std::string::npos);
  EXPECT_NE(junit.find("<failure"), std::string::npos);

  // DP: the last gathered sample left out.
  const auto dp = ddpbench({"run", "--scenario", "toy_cnn", "--modes", "single,dp", "--gpus", "2",
                            "--steps", "2", "--check-only", "--quiet", "--inject-fault",
                            "eval:rank=0", "--out", path("baddp")});
  ASSERT_EQ(dp.exit_code, 1) << dp.out << dp.err;
  const auto dp_check = find_check(read_json(path("baddp") + "/report.json"), "dp", "evaluation");
  EXPECT_EQ(dp_check.at("status"), "fail");
  EXPECT_NE(dp_check.at("detail").get<std::string>().find("511 samples counted"), std::string::npos)
      << dp_check.dump();
}

TEST_F(EvaluationE2E, AnUnevenSetReportsWhatItsPaddingDuplicatesChanged) {
  // 101 samples over 4 ranks: DistributedSampler pads to 104 with samples 0, 1 and 2 again.
  const auto r =
      ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "4", "--steps", "2", "--check-only",
                "--quiet", "--eval-size", "101", "--out", path("uneven")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("uneven") + "/report.json");
  const auto& e = result_of(report, "ddp").at("evaluation");
  EXPECT_EQ(e.at("samples"), 101);
  EXPECT_EQ(e.at("count"), 104);
  EXPECT_EQ(e.at("padded"), 3);
  EXPECT_NE(e.at("summary").get<std::string>().find("3 padding duplicate(s) changed accuracy by"),
            std::string::npos)
      << e.dump();
  // Single evaluates each sample once.
  EXPECT_EQ(result_of(report, "single").at("evaluation").at("count"), 101);
  EXPECT_EQ(find_check(report, "ddp", "evaluation").at("status"), "pass");
}

TEST_F(EvaluationE2E, RegressionScenariosSkipThePassAndRefuseItsFlags) {
  const auto r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--check-only",
                           "--quiet", "--out", path("reg")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("reg") + "/report.json");
  const auto& e = result_of(report, "ddp").at("evaluation");
  EXPECT_EQ(e.at("status"), "skipped");
  EXPECT_NE(e.at("skipped_reason").get<std::string>().find("not a classifier"), std::string::npos);

  const auto refused =
      ddpbench({"run", "--scenario", "linear_mse", "--eval-size", "10", "--out", path("refused")});
  EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("--eval-size"), std::string::npos) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(path("refused")));

  const auto too_big =
      ddpbench({"run", "--scenario", "toy_cnn", "--eval-size", "20000", "--out", path("big")});
  EXPECT_EQ(too_big.exit_code, 2) << too_big.out << too_big.err;
  EXPECT_NE(too_big.err.find("--eval-size 20000 is outside 1..10000"), std::string::npos)
      << too_big.err;

  const auto no_pass = ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--eval-size", "0",
                                 "--inject-fault", "eval:rank=1", "--out", path("nopass")});
  EXPECT_EQ(no_pass.exit_code, 2) << no_pass.out << no_pass.err;
  EXPECT_NE(no_pass.err.find("--inject-fault eval"), std::string::npos) << no_pass.err;
}

}  // namespace
}  // namespace ddpbench
