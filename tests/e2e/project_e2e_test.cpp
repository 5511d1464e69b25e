// project_e2e_test.cpp — `ddpbench project` through the real binary on real small runs: a toy_cnn
// scaling sweep is projected, validated on its own held-out world size and drawn; a doctored
// held-out measurement makes the validation report a large error; a one-point run says no
// validation was possible; bad input is refused with exit 2, one line, and nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/cli_runner.h"
#include "support/retimed_report.h"
#include "support/temp_dir_test.h"
#include "support/file_contents.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using testing::ddpbench;
using testing::slurp;

class Project : public testing::TempDirTest {
 protected:
  // One perf-only sweep shared by the tests of this suite (about 15 s on two cores).
  static void SetUpTestSuite() {
    sweep_dir_ = testing::make_temp_dir("project-sweep");
    const auto r = ddpbench({"scale", "--scenario", "toy_cnn", "--gpus", "2,3,4", "--modes", "ddp",
                             "--steps", "6", "--warmup", "1", "--threads", "1", "--quiet", "--out",
                             sweep_dir_ + "/sweep"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  static void TearDownTestSuite() { fs::remove_all(sweep_dir_); }
  static std::string sweep() { return sweep_dir_ + "/sweep/report.json"; }
  static inline std::string sweep_dir_;
};

// The step time a result's throughput implies (the median step; what project reads as the
// measured step).
double mean_step(const json& result) {
  return result["throughput"]["samples_per_step"].get<double>() /
         result["throughput"]["samples_per_s"].get<double>();
}

TEST_F(Project, ProjectsARealSweepAndValidatesOnItsHeldOutWorldSize) {
  const auto r = ddpbench({"project", "--from", sweep(), "--devices", "8,64,512", "--link-gbps",
                           "100,400", "--out", path("proj")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("fitted on K=2,3, predicted K=4"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ring    100 Gb/s      512"), std::string::npos) << r.out;
  for (const char* f : {"projection.json", "projection.csv", "projection.html"}) {
    EXPECT_TRUE(fs::exists(path("proj") + "/" + f)) << f;
  }
  const json in = testing::read_json(sweep());
  const json p = testing::read_json(path("proj") + "/projection.json");
  // The basis is the input's largest DDP point, read as measured.
  json k4;
  for (const json& res : in["results"]) {
    if (res["mode"] == "ddp" && res["world_size"] == 4) k4 = res;
  }
  ASSERT_FALSE(k4.is_null());
  const json& b = p["basis"];
  EXPECT_EQ(b["reference_world_size"], 4);
  EXPECT_NEAR(b["step_s"].get<double>(), mean_step(k4), 1e-12);
  // The phases are means, so the exposed share is taken of the mean step and applied to the
  // measured (median) step.
  const double exposed_share = k4["throughput"]["phases"]["comm_wait_s"].get<double>() /
                               k4["throughput"]["step_time_mean_s"].get<double>();
  EXPECT_NEAR(b["compute_s"].get<double>(), mean_step(k4) * (1 - exposed_share), 1e-12);
  EXPECT_EQ(b["bytes_per_step"], k4["throughput"]["bytes_allreduced_per_step"]);
  // Validation: fitted on 2 and 3, the error at 4 is the measured one.
  const json& v = p["validation"];
  ASSERT_TRUE(v["possible"].get<bool>()) << v.dump();
  ASSERT_EQ(v["held_out"].size(), 1u);
  const json& h = v["held_out"][0];
  EXPECT_EQ(h["world_size"], 4);
  EXPECT_NEAR(h["measured_step_s"].get<double>(), mean_step(k4), 1e-12);
  EXPECT_NEAR(h["step_error"].get<double>(),
              h["predicted_step_s"].get<double>() / h["measured_step_s"].get<double>() - 1, 1e-9);
  // Every projected point is compute + max(0, T - window) with the ring formula.
  ASSERT_EQ(p["projected"].size(), 6u);
  const double bytes = b["bytes_per_step"].get<double>();
  for (const json& q : p["projected"]) {
    const double n = q["devices"].get<double>();
    const double beta = 8 / (q["link_gbit_s"].get<double>() * 1e9);
    const double t = 2 * (n - 1) * 5e-6 + 2 * (n - 1) / n * bytes * beta;
    EXPECT_NEAR(q["allreduce_s"].get<double>(), t, 1e-12);
    const double exposed = std::max(0.0, t - b["overlap_window_s"].get<double>());
    EXPECT_NEAR(q["step_s"].get<double>(), b["compute_s"].get<double>() + exposed, 1e-12);
  }
  const std::string html = slurp(path("proj") + "/projection.html");
  EXPECT_NE(html.find("Dashed: projection"), std::string::npos);
  EXPECT_NE(html.find("stroke-dasharray"), std::string::npos);
}

TEST_F(Project, AWrongHeldOutMeasurementShowsAsALargeError) {
  json doc = testing::read_json(sweep());
  // K=4 doctored: 50 ms more waiting for gradients than it measured, in every rank's every step,
  // so every step (and the mean) is 50 ms longer: the report audit recomputes the wait from the
  // ranks' and the step figures from the steps, and refuses a wait edited alone.
  for (json& res : doc["results"]) {
    if (res["mode"] == "ddp" && res["world_size"] == 4) testing::add_comm_wait(res, 0.05);
  }
  testing::refigure(doc);
  std::ofstream(path("doctored.json")) << doc.dump();
  const auto r = ddpbench({"project", "--from", path("doctored.json"), "--out", path("proj")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json v = testing::read_json(path("proj") + "/projection.json")["validation"];
  EXPECT_GT(v["max_abs_step_error"].get<double>(), 0.5) << v.dump();
  EXPECT_LT(v["held_out"][0]["step_error"].get<double>(), -0.5) << v.dump();
}

// Also: projected into the run's own folder, the files are added beside the report, which stays.
TEST_F(Project, ARunWithOneWorldSizeSaysNoValidationWasPossible) {
  const auto run =
      ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--modes", "single,ddp",
                "--perf-only", "--steps", "4", "--threads", "1", "--quiet", "--out", path("run")});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::string report_before = slurp(path("run") + "/report.json");
  const auto r = ddpbench({"project", "--from", path("run"), "--out", path("run")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("no validation possible"), std::string::npos) << r.out;
  EXPECT_EQ(slurp(path("run") + "/report.json"), report_before);
  EXPECT_TRUE(fs::exists(path("run") + "/report.html"));
  EXPECT_TRUE(fs::exists(path("run") + "/projection.html"));
  const json v = testing::read_json(path("run") + "/projection.json")["validation"];
  EXPECT_FALSE(v["possible"].get<bool>());
  EXPECT_TRUE(v["max_abs_step_error"].is_null());
  EXPECT_TRUE(v["held_out"].empty());
}

TEST_F(Project, BadInputIsRefusedWithOneLineAndNothingWritten) {
  std::ofstream(path("foreign.json")) << R"({"hello": "world"})";
  std::ofstream(path("broken.json")) << R"({"schema_version": 1, "resu)";
  json no_ddp = testing::read_json(sweep());
  json kept = json::array();
  for (const json& res : no_ddp["results"]) {
    if (res["mode"] != "ddp") kept.push_back(res);
  }
  no_ddp["results"] = kept;
  std::ofstream(path("no_ddp.json")) << no_ddp.dump();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--from", path("missing.json")}, "no such file"},
      {{"--from", path("foreign.json")}, "not a ddpbench report"},
      {{"--from", path("broken.json")}, "not a valid report"},
      {{"--from", path("no_ddp.json")}, "no timed ddp result"},
      {{"--from", sweep(), "--devices", "8,0"}, "--devices"},
      {{"--from", sweep(), "--link-gbps", "0"}, "--link-gbps"},
      {{"--from", sweep(), "--link-gbps", "100,-5"}, "--link-gbps"},
      {{"--from", sweep(), "--algo", "bcube"}, "--algo"},
      {{"--from", sweep(), "--alpha-us", "-1"}, "--alpha-us"},
      {{"--devices", "8"}, "--from"},
  };
  for (const auto& [flags, named] : cases) {
    std::vector<std::string> args = {"project"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--out", path("never")});
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << named << ": " << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("never"))) << named;
  }
}

}  // namespace
}  // namespace ddpbench
