// script_model_synthetic_e2e_test.cpp — a --model file without data of its own (issue 33):
// synthetic tensors of the declared shape (--input-shape with --num-classes or --target-shape,
// float or int64 inputs) judged in single, dp and ddp, where a gradient fault FAILS naming the
// step and tensor and --bisect says it persists in float64; `scale` on the same; the MODEL.FILE
// and DATA.FILE keys of a scenario file, relative to the file, and the scenario a report writes
// back running again; and what does not fit refused in one line, exit 2, nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/cli_runner.h"
#include "support/script_test_models.h"
#include "support/subprocess.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;
using testing::find_check;
using testing::read_json;
using testing::result_of;

class SyntheticDataE2E : public testing::TempDirTest {
 protected:
  static void SetUpTestSuite() { models_ = new std::string(testing::make_script_test_models()); }
  static void TearDownTestSuite() {
    delete models_;
  }
  static std::string model(const std::string& name) { return *models_ + "/" + name; }

  // A short checked run of the mlp with BatchNorm (10 features in, 10 logits out) on `data`
  // (kClasses: synthetic class labels), then `extra`.
  testing::ProcessResult run(const std::string& out, std::vector<std::string> extra,
                             std::vector<std::string> data = kClasses) {
    std::vector<std::string> args = {"run",          "--model", model("mlp_bn.pt"), "--steps", "2",
                                     "--batch-size", "12",      "--check-only",     "--quiet",
                                     "--out",        path(out)};
    args.insert(args.end(), data.begin(), data.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return ddpbench(args);
  }

  static inline const std::vector<std::string> kClasses = {"--input-shape", "10", "--num-classes",
                                                           "10"};
  static std::string* models_;
};
std::string* SyntheticDataE2E::models_ = nullptr;

TEST_F(SyntheticDataE2E, AModelWithoutDataIsJudgedInEveryModeAndAFaultFails) {
  const auto r = run("classes", {"--modes", "single,dp,ddp", "--gpus", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("classes") + "/report.json");
  EXPECT_TRUE(report.at("passed").get<bool>());
  EXPECT_EQ(report["config"]["dataset"],
            "synthetic inputs [10] float32 -> 10 classes (1024 samples, seed 0)");
  for (const char* mode : {"dp", "ddp"}) {
    EXPECT_EQ(find_check(report, mode, "gradients").at("status"), "pass") << mode;
    EXPECT_EQ(find_check(report, mode, "evaluation").at("status"), "pass") << mode;
  }

  // int64 token ids and regression targets (MSE by default), world 3.
  const auto tokens = ddpbench({"run", "--model", model("tokens.pt"), "--input-shape", "6",
                                "--input-dtype", "int64", "--vocab-size", "50", "--target-shape",
                                "4", "--modes", "single,dp,ddp", "--gpus", "3", "--steps", "2",
                                "--batch-size", "9", "--check-only", "--quiet", "--out",
                                path("tokens")});
  ASSERT_EQ(tokens.exit_code, 0) << tokens.out << tokens.err;
  const auto t = read_json(path("tokens") + "/report.json");
  EXPECT_TRUE(t.at("passed").get<bool>());
  EXPECT_EQ(t["config"]["loss"], "MSELoss") << t["config"].dump();

  // A 1e-4 gradient error on rank 1 at step 1 fails, named, and persists in float64.
  const auto fault = run("fault", {"--modes", "single,ddp", "--gpus", "2", "--inject-fault",
                                   "grad:rank=1,step=1,eps=1e-4", "--bisect"});
  EXPECT_EQ(fault.exit_code, 1) << fault.out << fault.err;
  const auto f = read_json(path("fault") + "/report.json");
  EXPECT_EQ(find_check(f, "ddp", "gradients").at("status"), "fail");
  const auto& first = result_of(f, "ddp").at("first_divergence");
  EXPECT_EQ(first.at("step"), 1) << first.dump();
  EXPECT_EQ(first.at("bisect"), "persists") << first.dump();
}

TEST_F(SyntheticDataE2E, ScaleMeasuresTheModelOnItsSyntheticData) {
  const auto r = ddpbench({"scale", "--model", model("mlp.pt"), "--input-shape", "10",
                           "--num-classes", "10", "--gpus", "1,2", "--steps", "2", "--warmup",
                           "0", "--batch-size", "8", "--out", path("scale")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("scale") + "/report.json");
  EXPECT_EQ(report["config"]["model"].get<std::string>().rfind("TorchScript sha256:", 0), 0u);
  EXPECT_EQ(report["config"]["dataset"],
            "synthetic inputs [10] float32 -> 10 classes (1024 samples, seed 0)");
  EXPECT_GE(report.at("results").size(), 3u) << report["results"].dump();  // single, ddp x2
}

// MODEL.FILE and DATA.FILE in a scenario file are relative to the file; the report's
// scenario_yaml (paths made absolute) runs again from anywhere, to the same model and data.
TEST_F(SyntheticDataE2E, ScenarioFileKeysNameTheModelAndDataRelativeToTheFile) {
  fs::create_directories(path("cfg"));
  const std::string yaml = path("cfg/mine.yaml");
  std::ofstream(yaml) << "SCENARIO: {BASE: cifar_resnet18, NAME: mine}\n"
                      << "MODEL: {FILE: " << fs::relative(model("mlp.pt"), path("cfg")).string()
                      << "}\nDATA:\n  FILE: "
                      << fs::relative(model("data_classes.pt"), path("cfg")).string()
                      << "\nTRAIN: {BATCH_SIZE: 8, STEPS: 2}\n";
  const auto r = ddpbench({"run", "--config", yaml, "--modes", "single,ddp", "--gpus", "2",
                           "--check-only", "--quiet", "--out", path("cfg_run")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("cfg_run") + "/report.json");
  EXPECT_TRUE(report.at("passed").get<bool>());
  EXPECT_EQ(report["config"]["dataset"].get<std::string>().rfind("--data tensors sha256:", 0), 0u);
  const std::string written = report["config"]["scenario_yaml"];
  EXPECT_NE(written.find("FILE: " + model("mlp.pt")), std::string::npos) << written;
  std::ofstream(path("again.yaml")) << written;
  const auto again = ddpbench({"run", "--config", path("again.yaml"), "--modes", "single,ddp",
                               "--gpus", "2", "--check-only", "--quiet", "--out", path("again")});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  const auto back = read_json(path("again") + "/report.json");
  EXPECT_EQ(back["config"]["model"], report["config"]["model"]);
  EXPECT_EQ(back["config"]["dataset"], report["config"]["dataset"]);
}

TEST_F(SyntheticDataE2E, DataThatDoesNotFitTheModelIsRefusedInOneLine) {
  // The data flags of each case, and what the line says.
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--input-shape", "9", "--num-classes", "10"},
       "forward fails on a batch of shape [1, 9] Float (synthetic inputs"},
      {{"--input-shape", "10", "--num-classes", "12"},
       "--num-classes 12: the model's output for one sample has shape"},
      {{"--input-shape", "10", "--num-classes", "10", "--target-shape", "10"},
       "needs one kind of target, and has two"},
      {{"--input-shape", "10", "--num-classes", "10", "--loss", "rmse"},
       "LOSS.NAME (--loss) does not fit the synthetic targets"},
      {{"--input-shape", "10", "--num-classes", "10", "--data-dir", *models_},
       "--input-shape and --data-dir both name the training data"},
      {{"--input-shape", "10,x", "--num-classes", "10"},
       "DATA.INPUT_SHAPE (--input-shape): '10,x' is not a shape"},
      {{"--num-classes", "10"}, "DATA.NUM_CLASSES (--num-classes) describes synthetic data"},
  };
  for (const auto& [args, says] : cases) {
    const auto r = run("refused", {}, args);
    EXPECT_EQ(r.exit_code, 2) << says << r.out << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_FALSE(fs::exists(path("refused"))) << says;
  }
}

}  // namespace
}  // namespace ddpbench
