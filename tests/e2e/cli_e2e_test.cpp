// cli_e2e_test.cpp — drives the real ddpbench binary: every subcommand's output, and the report
// and state files (read back by real PyTorch). The bad-input contract (exit 2, exactly one line on
// stderr naming the problem, nothing written) is cli_bad_input_e2e_test.cpp's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli_e2e_fixture.h"
#include "support/cli_runner.h"
#include "support/test_paths.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;
using testing::oracle;
using testing::python;
using testing::read_json;

TEST_F(CliE2E, VersionAndHelp) {
  const auto v = ddpbench({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("ddpbench 0."), std::string::npos) << v.out;
  EXPECT_NE(v.out.find("libtorch"), std::string::npos) << v.out;
  const auto h = ddpbench({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  for (const char* sub : {"run", "sampler", "list"}) EXPECT_NE(h.out.find(sub), std::string::npos);
}

TEST_F(CliE2E, FlagsWithoutASubcommandMeanRun) {
  const std::string out = tmp_ + "/bare";
  const auto r = ddpbench({"--scenario", "linear_mse", "--gpus", "2", "--quiet", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(out + "/report.json"));
  const auto help = ddpbench({"run", "--help"});
  EXPECT_NE(help.out.find("--timeout FLOAT=300"), std::string::npos) << help.out;  // defaults
  EXPECT_NE(help.out.find("syncbn (ddp or zero; SyncBN, a reference in --modes)"),
            std::string::npos)
      << help.out;
  EXPECT_NE(help.out.find("dpbuffers"), std::string::npos) << help.out;
}

// As Note [Default comparison] has it, without --modes and --gpus a run compares data parallel with
// single-device training (every mode; 2 CPU ranks here), so its verdict is about something. Its
// 2 timed steps are too few for a stable median, and every format says so.
TEST_F(CliE2E, ABareRunJudgesEveryModeAndFlagsItsWeakTiming) {
  const std::string out = tmp_ + "/bare";
  const auto r = ddpbench({"run", "--scenario", "linear_mse", "--steps", "2", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(out + "/report.json");
  EXPECT_EQ(report.at("config").at("modes"), nlohmann::json({"single", "dp", "ddp"}));
  const auto& results = report.at("results");
  ASSERT_EQ(results.size(), 3u);
  const bool cpu = report.at("context").at("device") == "cpu";
  for (size_t i = 0; i < 3; ++i) {
    const auto& m = results[i];
    EXPECT_EQ(m.at("mode"), report.at("config").at("modes")[i]);
    if (i > 0) {
      EXPECT_FALSE(m.at("checks").empty()) << m.at("mode") << " was judged against nothing";
      EXPECT_EQ(m.at("world_size"), results[2].at("world_size"));
      if (cpu) EXPECT_EQ(m.at("world_size"), 2);
    }
    const auto& t = m.at("throughput");
    EXPECT_EQ(t.at("timed_steps"), 2);
    ASSERT_FALSE(t.at("weak_reasons").empty()) << m.at("mode");
    EXPECT_NE(t.at("weak_reasons")[0].get<std::string>().find("2 timed steps (< 10)"),
              std::string::npos)
        << t.at("weak_reasons");
    EXPECT_TRUE(t.contains("step_time_mean_s") && t.contains("step_time_cv")) << t;
  }
  EXPECT_NE(r.out.find("weak timing figures"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ddp ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  std::ifstream in(out + "/report.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("badge weak"), std::string::npos);
}

TEST_F(CliE2E, ListShowsEveryScenarioWithParameterCounts) {
  const auto r = ddpbench({"list", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = nlohmann::json::parse(r.out);
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& row : rows) by_name[row.at("name")] = row;
  ASSERT_EQ(by_name.size(), 12u);
  // wte 64 x 32 (tied: counted once), wpe 16 x 32, 2 blocks of 12,704, ln_f's 64.
  EXPECT_EQ(by_name.at("gpt_tiny").at("parameters"), 28032);
  EXPECT_EQ(by_name.at("uneven_data").at("parameters"), 110);
  EXPECT_EQ(by_name.at("rmse_linear").at("parameters"), 110);
  EXPECT_EQ(by_name.at("resnet18_syncbn").at("parameters"), 11181642);
  EXPECT_EQ(by_name.at("cifar_resnet18").at("parameters"), 11181642);  // torchvision's count
  EXPECT_EQ(by_name.at("toy_cnn").at("parameters"), 62006);            // the tutorial's count
  EXPECT_EQ(by_name.at("linear_mse").at("parameters"), 110);
  // 15000 x 64 embedding, 4 x (64 x 64 x 15 + 64) convolutions, 64 x 128 + 128, 128 x 2 + 2.
  EXPECT_EQ(by_name.at("imdb_gcnn").at("parameters"), 1214594);
  EXPECT_TRUE(by_name.at("cifar_resnet18").at("default").get<bool>());
  const auto text = ddpbench({"list"});
  EXPECT_NE(text.out.find("(default)"), std::string::npos);
}

TEST_F(CliE2E, SamplerSeedExample) {
  const auto text = ddpbench({"sampler", "--dataset-size", "10", "--replicas", "3"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("rank 0: 0 3 6 9\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("rank 1: 1 4 7 0*\n"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("rank 2: 2 5 8 1*\n"), std::string::npos) << text.out;

  const auto j = nlohmann::json::parse(ddpbench({"sampler", "--dataset-size", "10", "--replicas",
                                                 "3", "--drop-last", "--format", "json"})
                                           .out);
  EXPECT_EQ(j.at("ranks"), nlohmann::json::parse("[[0,3,6],[1,4,7],[2,5,8]]"));
  for (const char* key : {"dataset_size", "replicas", "drop_last", "shuffle", "seed", "epoch",
                          "num_samples", "total_size", "ranks"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j.at("num_samples"), 3);
  EXPECT_EQ(j.at("total_size"), 9);
}

TEST_F(CliE2E, SamplerShuffledMatchesPythonAndLibtorchDiffers) {
  const std::vector<std::string> args = {
      "sampler", "--dataset-size", "23", "--replicas", "4",   "--shuffle", "--seed",
      "5",       "--epoch",        "2",  "--format",   "json"};
  const auto ours = nlohmann::json::parse(ddpbench(args).out);
  const auto py = python({"-c",
                          "import json,torch\n"
                          "from torch.utils.data.distributed import DistributedSampler as D\n"
                          "r=[]\n"
                          "for k in range(4):\n"
                          "  s=D(range(23),num_replicas=4,rank=k,shuffle=True,seed=5)\n"
                          "  s.set_epoch(2); r.append(list(s))\n"
                          "print(json.dumps(r))"});
  ASSERT_EQ(py.exit_code, 0) << py.err;
  EXPECT_EQ(ours.at("ranks"), nlohmann::json::parse(py.out));
  auto lt = args;
  lt.insert(lt.end(), {"--impl", "libtorch"});
  const auto theirs = nlohmann::json::parse(ddpbench(lt).out);
  EXPECT_EQ(theirs.at("impl"), "libtorch");
  EXPECT_NE(theirs.at("ranks"), ours.at("ranks"));
}

// A successful run echoes its --out too ("wrote DIR/report..."): an escape in the folder name is
// shown, not sent to the terminal.
TEST_F(CliE2E, TheWroteLineEscapesTheOutFolder) {
  const std::string out = tmp_ + "/bold\x1b[1m";
  const auto r = ddpbench({"run", "--scenario", "linear_mse", "--steps", "1", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "raw escape echoed";
  EXPECT_NE(r.out.find("wrote " + tmp_ + "/bold\\x1b[1m/report."), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(out + "/report.json"));
}

TEST_F(CliE2E, LinearMseReportAndStateMatchPyTorch) {
  const std::string out = tmp_ + "/linear";
  // Single-device alone (a bare run compares every mode on 2 ranks, whose sample order changes the
  // rounding): the oracle is PyTorch training on one device.
  const auto r = ddpbench(
      {"run", "--scenario", "linear_mse", "--modes", "single", "--out", out, "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = read_json(out + "/report.json");
  EXPECT_EQ(report.at("schema_version"), 13);
  for (const char* key :
       {"host", "cores", "libtorch_version", "compiler", "git_revision", "argv"}) {
    EXPECT_TRUE(report.at("context").contains(key)) << key;
  }
  EXPECT_EQ(report.at("context").at("argv").back(), "1");
  EXPECT_EQ(report.at("config").at("scenario"), "linear_mse");
  const auto& result = report.at("results").at(0);
  EXPECT_EQ(result.at("mode"), "single");
  EXPECT_EQ(result.at("world_size"), 1);
  ASSERT_EQ(result.at("losses").size(), 1u);
  EXPECT_NEAR(result.at("losses")[0].get<double>(), 1.5093421, 1e-6);  // the notebook's loss

  const auto check = python({oracle("linear_mse_oracle.py"), "--check", out + "/state_single.pt"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;

  // The oracle comparison can fail: a different seed's weights must be rejected.
  const std::string other = tmp_ + "/other";
  ASSERT_EQ(ddpbench({"run", "--scenario", "linear_mse", "--modes", "single", "--seed", "124",
                      "--out", other})
                .exit_code,
            0);
  const auto wrong =
      python({oracle("linear_mse_oracle.py"), "--check", other + "/state_single.pt"});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out;
  EXPECT_NE(wrong.out.find("FAIL"), std::string::npos) << wrong.out;
}

TEST_F(CliE2E, LinearMseFloat64SeveralStepsMatchesPyTorch) {
  const std::string out = tmp_ + "/f64";
  ASSERT_EQ(ddpbench({"run", "--scenario", "linear_mse", "--dtype", "float64", "--steps", "5",
                      "--out", out})
                .exit_code,
            0);
  const auto check = python({oracle("linear_mse_oracle.py"), "--check", out + "/state_single.pt",
                             "--dtype", "float64", "--steps", "5", "--atol", "1e-12"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST_F(CliE2E, ResNet18StateLoadsInPythonWithTorchvisionNames) {
  const std::string out = tmp_ + "/r18";
  const auto r = ddpbench({"run", "--modes", "single", "--steps", "1", "--batch-size", "8",
                           "--check-only", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cifar_resnet18"), std::string::npos);
  const auto py = python({"-c",
                          "import sys,torch,torchvision\n"
                          "d=torch.load(sys.argv[1],weights_only=True)\n"
                          "ref=torchvision.models.resnet18(num_classes=10).state_dict()\n"
                          "assert sorted(d)==sorted(ref), set(d)^set(ref)\n"
                          "assert all(d[k].shape==ref[k].shape for k in ref)\n"
                          "assert int(d['bn1.num_batches_tracked'])==1\n"
                          "print(len(d))",
                          out + "/state_single.pt"});
  EXPECT_EQ(py.exit_code, 0) << py.err;
  EXPECT_EQ(py.out, "122\n");
}

TEST_F(CliE2E, RealCifarBinaryFilesAcrossEpochs) {
  const std::string data = tmp_ + "/cifar";
  testing::write_cifar_batch(data, 40, 31);
  const std::string out = tmp_ + "/out";
  const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--data-dir", data, "--batch-size", "16",
                           "--steps", "7", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto report = read_json(out + "/report.json");
  EXPECT_NE(report.at("config").at("dataset").get<std::string>().find("CIFAR-10 train (40 samples"),
            std::string::npos);
  EXPECT_EQ(report.at("config").at("steps_per_epoch"), 3);  // 16 + 16 + 8
  EXPECT_EQ(report.at("results")[0].at("losses").size(), 7u);
}

TEST_F(CliE2E, FashionMnistRunsOnTheRealDataOrSkips) {
  const std::string out = tmp_ + "/fm";
  const auto r = ddpbench({"run", "--scenario", "fashion_mnist_cnn", "--steps", "3", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (!fs::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz")) {
    EXPECT_NE(r.err.find("skipped"), std::string::npos);
    GTEST_SKIP() << "dataset-fashion-mnist not installed";
  }
  const auto report = read_json(out + "/report.json");
  EXPECT_EQ(report.at("config").at("sampler").at("dataset_size"), 60000);
  EXPECT_EQ(report.at("results")[0].at("losses").size(), 3u);
}

}  // namespace
}  // namespace ddpbench

namespace ddpbench {
namespace {

// `script` runs the command on a pseudo-terminal: the progress line appears only there, and
// never with --quiet or when stdout is a pipe (CI logs).
TEST_F(CliE2E, ProgressLineOnlyOnATerminal) {
  const std::string cmd =
      std::string(testing::kDdpbenchBinary) + " run --scenario toy_cnn --steps 12 --out ";
  const auto tty = testing::run_process({"script", "-qec", cmd + path("tty"), "/dev/null"});
  ASSERT_EQ(tty.exit_code, 0) << tty.out << tty.err;
  EXPECT_NE(tty.out.find("step 12/12"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("ETA"), std::string::npos);
  EXPECT_NE(tty.out.find("loss"), std::string::npos);
  const auto quiet =
      testing::run_process({"script", "-qec", cmd + path("quiet") + " --quiet", "/dev/null"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.out;
  EXPECT_NE(quiet.out.find("PASS"), std::string::npos) << quiet.out;
  EXPECT_EQ(quiet.out.find("ETA"), std::string::npos) << quiet.out;
  const auto piped =
      ddpbench({"run", "--scenario", "toy_cnn", "--steps", "12", "--out", path("pipe")});
  EXPECT_EQ(piped.out.find("ETA"), std::string::npos);
}

}  // namespace
}  // namespace ddpbench
