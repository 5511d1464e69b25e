// report_gate_e2e_test.cpp — `ddpbench report` regenerates byte-identical formats from
// report.json, its JUnit XML parses as XML, and `ddpbench gate` gives exit 0 / 1 / 2 for an
// unchanged run / a regressed run / a run of another configuration.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/cli_runner.h"
#include "support/retimed_report.h"
#include "support/temp_dir_test.h"
#include "support/file_contents.h"

namespace ddpbench {
namespace {
using testing::ddpbench;
using testing::slurp;

class ReportAndGate : public testing::TempDirTest {};

TEST_F(ReportAndGate, ReportRegeneratesEveryFormatAndGateDecides) {
  const std::string run = path("run");
  ASSERT_EQ(
      ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--steps", "3", "--out", run})
          .exit_code,
      0);
  const auto regen = ddpbench({"report", run + "/report.json", "--out", path("regen")});
  ASSERT_EQ(regen.exit_code, 0) << regen.err;
  for (const char* f : {"report.json", "report.csv", "report.junit.xml", "report.md"}) {
    EXPECT_EQ(slurp(run + "/" + f), slurp(path("regen") + "/" + f)) << f;
  }
  const auto xml =
      testing::python({"-c",
                       "import sys,xml.etree.ElementTree as E; r=E.parse(sys.argv[1]).getroot(); "
                       "print(len(r.findall('.//testcase')))",
                       run + "/report.junit.xml"});
  EXPECT_EQ(xml.exit_code, 0) << xml.err;
  // 5 checks (ddp's collective count among them), and the single and ddp points' throughput.
  EXPECT_EQ(xml.out, "7\n");

  const auto same = ddpbench({"gate", "--baseline", run + "/report.json", "--current",
                              run + "/report.json", "--format", "md"});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;
  EXPECT_NE(same.out.find("| linear_mse/ddp/2 |"), std::string::npos) << same.out;

  // A samples/s figure edited apart from the step samples it comes from is refused, naming it.
  auto doc = testing::read_json(run + "/report.json");
  auto edited = doc;
  edited["results"][1]["throughput"]["samples_per_s"] =
      doc["results"][1]["throughput"]["samples_per_s"].get<double>() / 2;
  std::ofstream(path("edited.json")) << edited.dump();
  const auto refused =
      ddpbench({"gate", "--baseline", run + "/report.json", "--current", path("edited.json")});
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_NE(refused.err.find("results[1].throughput.samples_per_s"), std::string::npos)
      << refused.err;

  // A current run whose steps took twice as long.
  testing::scale_step_times(doc["results"][1], 2);
  testing::refigure(doc);
  std::ofstream(path("slow.json")) << doc.dump();
  const auto slow =
      ddpbench({"gate", "--baseline", run + "/report.json", "--current", path("slow.json")});
  EXPECT_EQ(slow.exit_code, 1) << slow.out;
  EXPECT_NE(slow.out.find("slower"), std::string::npos) << slow.out;

  doc["config"]["dtype"] = "float64";
  std::ofstream(path("other.json")) << doc.dump();
  const auto other =
      ddpbench({"gate", "--baseline", run + "/report.json", "--current", path("other.json")});
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.err.find("dtype"), std::string::npos) << other.err;

  const auto missing = ddpbench({"report", path("nope.json")});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(testing::count_lines(missing.err), 1);
}

}  // namespace
}  // namespace ddpbench

namespace ddpbench {
namespace {

TEST_F(ReportAndGate, ScaleSweepWritesOnePointPerModeAndWorldSize) {
  const auto r =
      testing::ddpbench({"scale", "--scenario", "toy_cnn", "--gpus", "1,2", "--modes", "ddp,dp",
                         "--steps", "3", "--warmup", "1", "--out", path("scale")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::ifstream csv(path("scale") + "/report.csv");
  std::vector<std::string> lines;
  for (std::string l; std::getline(csv, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 1u + 1u + 2u * 2u) << "header, the baseline, 2 modes x 2 world sizes";
  EXPECT_EQ(
      lines[0].rfind("scenario,mode,world_size,backend,dtype,amp,global_batch,samples_per_s", 0),
      0u);
  const auto report = testing::read_json(path("scale") + "/report.json");
  for (const auto& point : report.at("results")) {
    if (point.at("mode") == "single") continue;
    EXPECT_GT(point.at("scaling_efficiency").get<double>(), 0) << point.dump();
    EXPECT_EQ(point.at("throughput").at("timed_steps"), 3);
    // Weak scaling: 16 / 2 = 8 samples per device at every K.
    EXPECT_EQ(point.at("throughput").at("samples_per_step").get<int64_t>(),
              8 * point.at("world_size").get<int64_t>());
  }
  // The sweep is described by its largest point and by the command the user typed, not by the
  // K=1 child's internal command line (a temporary --out, --gpus 1).
  const auto& config = report.at("config");
  EXPECT_EQ(config.at("world_size"), 2);
  EXPECT_EQ(config.at("global_batch"), 16);
  EXPECT_EQ(config.at("sampler").at("num_replicas"), 2);
  const auto& argv = report.at("context").at("argv");
  ASSERT_GE(argv.size(), 2u) << argv.dump();
  EXPECT_EQ(argv[1], "scale") << argv.dump();
  EXPECT_EQ(argv.dump().find("ddpbench-scale"), std::string::npos) << argv.dump();
}

// scale shares run's training flags and builds every point from them: the points train in the
// requested dtype with the requested global batch, and bad input for any point is refused before
// the first one starts.
TEST_F(ReportAndGate, ScalePointsUseRunsTrainingFlags) {
  const auto r = testing::ddpbench({"scale", "--scenario", "toy_cnn", "--gpus", "1,2", "--steps",
                                    "2", "--warmup", "0", "--dtype", "float64", "--batch-size",
                                    "12", "--threads", "1", "--out", path("f64")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = testing::read_json(path("f64") + "/report.json");
  EXPECT_EQ(report.at("config").at("dtype"), "float64");
  EXPECT_EQ(report.at("config").at("threads"), 1);
  for (const auto& point : report.at("results")) {
    if (point.at("mode") == "single") continue;
    // --batch-size is the global batch at the largest world size: 12 / 2 = 6 per device.
    EXPECT_EQ(point.at("throughput").at("samples_per_step").get<int64_t>(),
              6 * point.at("world_size").get<int64_t>());
  }
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--backend", "mpi"},
        // K=3's point would split a batch of 2 over 3 ranks (a batch smaller than the ranks).
        {"--gpus", "2,3", "--strong", "--batch-size", "2"}}) {
    std::vector<std::string> args = {"scale", "--scenario", "toy_cnn",  "--steps",
                                     "1",     "--out",      path("bad")};
    args.insert(args.end(), bad.begin(), bad.end());
    const auto refused = testing::ddpbench(args);
    EXPECT_EQ(refused.exit_code, 2) << bad[0] << ": " << refused.out << refused.err;
    EXPECT_EQ(testing::count_lines(refused.err), 1) << refused.err;
    EXPECT_EQ(refused.out.find("scale: K="), std::string::npos) << "a point started";
    EXPECT_FALSE(std::filesystem::exists(path("bad")));
  }
}

}  // namespace
}  // namespace ddpbench
