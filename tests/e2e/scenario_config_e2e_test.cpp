// scenario_config_e2e_test.cpp — scenario files through the real binary (issue 24): `list --yaml`
// output runs with --config and trains exactly what the built-in trains; an override reaches the
// spawned DDP ranks (single and ddp agree only if both applied it); the run's flags win over the
// scenario's keys; the report names the file and overrides; every bad input exits 2 with one line
// naming the key, and writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;

class ScenarioConfigE2E : public testing::TempDirTest {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = path(name);
    std::ofstream(p) << text;
    return p;
  }
  std::string list_yaml(const std::string& scenario) {
    const auto r = ddpbench({"list", "--yaml", scenario});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return write(scenario + ".yaml", r.out);
  }
  void expect_refused(const std::vector<std::string>& args, const std::string& named) {
    std::vector<std::string> all = args;
    all.insert(all.end(), {"--out", path("never")});
    const auto r = ddpbench(all);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("never"))) << named;
  }
};

TEST_F(ScenarioConfigE2E, ListYamlRunsAsTheBuiltinDoes) {
  const std::string file = list_yaml("toy_cnn");
  // One intra-op thread in every run: losses compared bit for bit must not differ by how a
  // reduction was split over threads.
  const std::vector<std::string> common = {"--gpus",       "2",      "--threads", "1",
                                           "--check-only", "--quiet"};
  std::vector<std::string> from_file = {"run", "--config", file, "--out", path("file")};
  from_file.insert(from_file.end(), common.begin(), common.end());
  from_file.insert(from_file.end(), {"TRAIN.STEPS", "2"});
  std::vector<std::string> builtin = {"run", "--scenario", "toy_cnn",      "--steps",
                                      "2",   "--out",      path("builtin")};
  builtin.insert(builtin.end(), common.begin(), common.end());
  const auto a = ddpbench(from_file);
  const auto b = ddpbench(builtin);
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(a.out.find("config    --config " + file + " TRAIN.STEPS 2 (base toy_cnn)"),
            std::string::npos)
      << a.out;
  const auto ra = testing::read_json(path("file") + "/report.json");
  const auto rb = testing::read_json(path("builtin") + "/report.json");
  EXPECT_EQ(ra["config"]["scenario"], "toy_cnn");
  EXPECT_EQ(ra["config"]["steps"], 2);
  EXPECT_EQ(ra["config"]["scenario_config"], "--config " + file + " TRAIN.STEPS 2");
  EXPECT_EQ(rb["config"]["scenario_config"], "");
  ASSERT_EQ(ra["results"].size(), rb["results"].size());
  for (size_t i = 0; i < ra["results"].size(); ++i) {
    EXPECT_EQ(ra["results"][i]["mode"], rb["results"][i]["mode"]);
    EXPECT_EQ(ra["results"][i]["losses"], rb["results"][i]["losses"]) << i;
  }
  // The report's scenario_yaml is itself a scenario file that runs.
  const std::string again = write("again.yaml", ra["config"]["scenario_yaml"].get<std::string>());
  // --gpus 2 as above: the global batch is the ranks' slices in rank order, so K changes the
  // order of the samples in it, and the rounding of the mean loss.
  const auto c =
      ddpbench({"run", "--config", again, "--steps", "2", "--modes", "single", "--gpus", "2",
                "--threads", "1", "--check-only", "--quiet", "--out", path("again")});
  ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  EXPECT_EQ(testing::read_json(path("again") + "/report.json")["results"][0]["losses"],
            rb["results"][0]["losses"]);
}

// The DDP ranks are spawned processes: they must apply the override too, or their trajectory
// leaves single's (lockstep checks each step's update, which the learning rate scales).
TEST_F(ScenarioConfigE2E, OverridesReachTheSpawnedRanks) {
  const auto r =
      ddpbench({"run", "--scenario", "toy_cnn", "--steps", "2", "--gpus", "2", "--check-only",
                "--quiet", "--out", path("o"), "OPTIM.BASE_LR", "0.05", "OPTIM.MOMENTUM", "0.5"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = testing::read_json(path("o") + "/report.json");
  EXPECT_NE(report["config"]["optimizer"].get<std::string>().find("0.05"), std::string::npos)
      << report["config"]["optimizer"];
}

// Precedence: the base < the file < the overrides < the run's flags.
TEST_F(ScenarioConfigE2E, FlagsWinOverTheScenarioKeys) {
  const std::string file = write("f.yaml",
                                 "SCENARIO: {BASE: linear_mse, NAME: linear_small}\n"
                                 "TRAIN: {BATCH_SIZE: 10, STEPS: 3}\n");
  const auto r = ddpbench({"run", "--config", file, "--modes", "single", "--quiet", "--out",
                           path("o"), "TRAIN.STEPS", "2", "--batch-size", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = testing::read_json(path("o") + "/report.json");
  EXPECT_EQ(report["config"]["scenario"], "linear_small");
  EXPECT_EQ(report["config"]["steps"], 2);          // the override over the file's 3
  EXPECT_EQ(report["config"]["global_batch"], 20);  // --batch-size over the file's 10
}

// scale starts every point as a child `run` (command_line()): each must get the file and the
// overrides, or the merged report would describe a scenario its points did not train.
TEST_F(ScenarioConfigE2E, ScalePointsGetTheFileAndOverrides) {
  const std::string file = list_yaml("linear_mse");
  const auto r = ddpbench({"scale", "--config", file, "--gpus", "1,2", "--steps", "1", "--quiet",
                           "--out", path("s"), "OPTIM.BASE_LR", "0.25"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = testing::read_json(path("s") + "/report.json");
  EXPECT_EQ(report["config"]["optimizer"], "SGD(lr=0.25)");
  EXPECT_EQ(report["config"]["scenario_config"], "--config " + file + " OPTIM.BASE_LR 0.25");
}

TEST_F(ScenarioConfigE2E, ListKeysNamesEveryKey) {
  const auto r = ddpbench({"list", "--keys"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* key :
       {"SCENARIO.BASE", "TRAIN.BATCH_SIZE", "OPTIM.BASE_LR", "TOL.GRAD_FLOAT64"}) {
    EXPECT_NE(r.out.find(key), std::string::npos) << key;
  }
  const auto bad = ddpbench({"list", "--yaml", "alexnet"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown scenario 'alexnet'"), std::string::npos) << bad.err;
}

TEST_F(ScenarioConfigE2E, BadScenarioInputIsRefusedNamingTheKey) {
  const std::string good = list_yaml("linear_mse");
  expect_refused({"run", "--scenario", "linear_mse", "TRAIN.BATCHSIZE", "4"},
                 "did you mean TRAIN.BATCH_SIZE?");
  expect_refused({"run", "--scenario", "linear_mse", "TRAIN.STEPS", "two"},
                 "TRAIN.STEPS (the command line): 'two' is not an integer");
  expect_refused({"run", "--scenario", "linear_mse", "TRAIN.STEPS"}, "'TRAIN.STEPS' has no value");
  expect_refused({"run", "--scenario", "linear_mse", "TRAIN.STEPS", "1", "TRAIN.STEPS", "2"},
                 "given twice");
  expect_refused({"run", "--config", path("absent.yaml")}, "no such file");
  expect_refused({"run", "--config", write("syntax.yaml", "TRAIN: {STEPS: 2\n")},
                 "YAML syntax error");
  expect_refused({"run", "--config", write("nobase.yaml", "TRAIN: {STEPS: 2}\n")},
                 "does not name its base");
  expect_refused({"run", "--config",
                  write("twice.yaml",
                        "SCENARIO.BASE: linear_mse\nTRAIN: {SEED: 1}\n"
                        "TRAIN.SEED: 2\n")},
                 "'TRAIN.SEED' is set twice");
  expect_refused({"run", "--config", good, "--scenario", "linear_mse"}, "excludes");
  // Without a subcommand, flags mean `run`.
  expect_refused({"--config", good, "OPTIM.BASE_LR", "-1"}, "OPTIM.BASE_LR");
  expect_refused({"scale", "--config", good, "--gpus", "1,2", "LOSS.NAME", "cross_entropy"},
                 "LOSS.NAME (--loss) does not fit linear_mse's data");
}

}  // namespace
}  // namespace ddpbench
