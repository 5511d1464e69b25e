// render_refusals_e2e_test.cpp — `ddpbench report` and `ddpbench project` only render, through the
// real binary on a small real run: huge but finite numbers render without a crash and leave no
// temporary in --out; an --out holding another run's results is refused (exit 2, one line) and
// nothing in it is removed or replaced, while re-rendering a run's own folder keeps its report and
// state; a report whose phases do not fit in its step is refused by `project`, and the projected
// efficiency never exceeds 100%.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

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

// Names of the temporaries OutputDir stages (".<name>.tmp-<pid>") found under `dir`.
std::vector<std::string> temporaries(const std::string& dir) {
  std::vector<std::string> found;
  if (!fs::exists(dir)) return found;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.path().filename().string().find(".tmp") != std::string::npos) {
      found.push_back(e.path().string());
    }
  }
  return found;
}

void expect_refused(const testing::ProcessResult& r, const std::string& named) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
}

class Render : public testing::TempDirTest {
 protected:
  // One small run (single, dp and ddp at K=2, checked and timed) shared by the suite; each test
  // copies it before touching it.
  static void SetUpTestSuite() {
    runs_dir_ = testing::make_temp_dir("render-runs");
    for (const char* name : {"a", "b"}) {
      const auto r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--steps", "2",
                               "--quiet", "--out", runs_dir_ + "/" + name});
      ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }
  }
  static void TearDownTestSuite() { fs::remove_all(runs_dir_); }
  // A private copy of run `name` ("a" or "b") in this test's folder.
  std::string copy_of(const std::string& name) {
    fs::copy(runs_dir_ + "/" + name, path(name), fs::copy_options::recursive);
    return path(name);
  }
  static inline std::string runs_dir_;
};

// Defect 5: phases of 1.7e308 s (1.7e311 ms: inf once scaled) crashed the chart's tick loop with
// SIGSEGV and left .report.*.tmp-<pid> files in --out; so did `project --alpha-us 1e306` (refused
// now, issue 51: the largest latency and device count the flags take still render).
TEST_F(Render, HugeFiniteNumbersRenderAndLeaveNoTemporaries) {
  const std::string run = copy_of("a");
  json doc = testing::read_json(run + "/report.json");
  for (json& res : doc["results"]) {
    for (const char* phase : {"data_s", "forward_s", "backward_s", "comm_wait_s", "optimizer_s"}) {
      // A per-rank mode's wait is its ranks' (recomputed from them: report_audit.h).
      if (res["throughput"]["ranks"].empty() || std::string(phase) != "comm_wait_s") {
        res["throughput"]["phases"][phase] = 1.7e308;
      }
    }
  }
  std::ofstream(path("huge.json")) << doc.dump();
  const auto report = ddpbench({"report", path("huge.json"), "--out", path("rendered")});
  EXPECT_EQ(report.exit_code, 0) << report.out << report.err;
  EXPECT_TRUE(fs::exists(path("rendered/report.html")));
  const std::string html = slurp(path("rendered/report.html"));
  EXPECT_EQ(html.find("=\"inf"), std::string::npos);
  EXPECT_EQ(html.find("=\"nan"), std::string::npos);
  EXPECT_EQ(temporaries(path("rendered")), std::vector<std::string>{});

  const auto project = ddpbench({"project", "--from", run, "--alpha-us", "1e6", "--devices",
                                 "1048576", "--out", path("projected")});
  EXPECT_EQ(project.exit_code, 0) << project.out << project.err;
  EXPECT_TRUE(fs::exists(path("projected/projection.html")));
  EXPECT_EQ(temporaries(path("projected")), std::vector<std::string>{});
  EXPECT_EQ(temporaries(run), std::vector<std::string>{});
}

// Defect 6: `report --out` and `project --out` into another run's folder deleted its report and
// state files. Refused now, with every file of that folder left as it was.
TEST_F(Render, IntoAnotherRunsFolderIsRefusedAndRemovesNothing) {
  const std::string a = copy_of("a");
  const std::string b = copy_of("b");
  ASSERT_TRUE(fs::exists(b + "/state_single.pt"));
  const auto before = testing::folder_contents(b);
  expect_refused(ddpbench({"report", a + "/report.json", "--out", b}), "report.json");
  EXPECT_EQ(testing::folder_contents(b), before);
  expect_refused(ddpbench({"project", "--from", a, "--out", b}), "report.json");
  EXPECT_EQ(testing::folder_contents(b), before);
  // A copy of a's own folder elsewhere: the same report.json, but state files render-only
  // commands must not remove.
  fs::copy(a, path("a_copy"), fs::copy_options::recursive);
  const auto copy_before = testing::folder_contents(path("a_copy"));
  expect_refused(ddpbench({"report", a, "--out", path("a_copy")}), "state_");
  EXPECT_EQ(testing::folder_contents(path("a_copy")), copy_before);
  // A hand-edited report beside a run's report.json: rendering it there would overwrite the run's.
  json edited = testing::read_json(a + "/report.json");
  edited["context"]["host"] = "edited";
  std::ofstream(a + "/edited.json") << edited.dump();
  const std::string a_report = slurp(a + "/report.json");
  expect_refused(ddpbench({"report", a + "/edited.json"}), "report.json");
  EXPECT_EQ(slurp(a + "/report.json"), a_report);
}

// The legitimate cases: a run's own folder, and a folder of earlier renderings of the same report.
TEST_F(Render, ReRenderingARunsOwnFolderKeepsItsReportAndState) {
  const std::string a = copy_of("a");
  fs::remove(a + "/report.html");
  const std::string report = slurp(a + "/report.json");
  const std::string state = slurp(a + "/state_single.pt");
  EXPECT_EQ(ddpbench({"report", a}).exit_code, 0);
  EXPECT_EQ(ddpbench({"report", a + "/report.json", "--out", a}).exit_code, 0);
  EXPECT_EQ(ddpbench({"project", "--from", a, "--out", a}).exit_code, 0);
  EXPECT_TRUE(fs::exists(a + "/report.html"));
  EXPECT_TRUE(fs::exists(a + "/projection.html"));
  EXPECT_EQ(slurp(a + "/report.json"), report);
  EXPECT_EQ(slurp(a + "/state_single.pt"), state);
  for (int twice = 0; twice < 2; ++twice) {
    const auto r = ddpbench({"report", a, "--out", path("rendered")});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto p = ddpbench({"project", "--from", a, "--out", path("projected")});
    EXPECT_EQ(p.exit_code, 0) << p.err;
  }
  EXPECT_EQ(slurp(path("rendered/report.json")), report);
}

// Defect 18: a comm wait longer than the step left no compute, and the projection printed 1400%
// efficiency. Refused, naming the result and the field; a consistent report never projects more
// than 100%, even against a slow measured single-device baseline.
TEST_F(Render, ProjectRefusesPhasesBeyondTheStepAndCapsEfficiency) {
  const std::string a = copy_of("a");
  json doc = testing::read_json(a + "/report.json");
  int ddp = -1;
  for (size_t i = 0; i < doc["results"].size(); ++i) {
    if (doc["results"][i]["mode"] == "ddp") ddp = static_cast<int>(i);
  }
  ASSERT_GE(ddp, 0);
  json& t = doc["results"][ddp]["throughput"];
  const double step = t["samples_per_step"].get<double>() / t["samples_per_s"].get<double>();
  json long_wait = doc;
  long_wait["results"][ddp]["throughput"]["phases"]["comm_wait_s"] = 14 * step;
  std::ofstream(path("long_wait.json")) << long_wait.dump();
  const auto r = ddpbench({"project", "--from", path("long_wait.json"), "--out", path("never")});
  expect_refused(r, "comm_wait_s");
  EXPECT_NE(r.err.find("results[" + std::to_string(ddp) + "]"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("never")));

  // A single-device baseline 100 times slower than DDP's compute: t(1) / t(n) > 1 from the model.
  json slow_single = doc;
  for (json& res : slow_single["results"]) {
    if (res["mode"] == "single") testing::scale_step_times(res, 100);
  }
  testing::refigure(slow_single);  // every point's efficiency against the slower baseline
  std::ofstream(path("slow_single.json")) << slow_single.dump();
  const auto p = ddpbench(
      {"project", "--from", path("slow_single.json"), "--devices", "2,8", "--out", path("proj")});
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  const json projection = testing::read_json(path("proj/projection.json"));
  ASSERT_FALSE(projection["projected"].empty());
  for (const json& q : projection["projected"]) {
    EXPECT_LE(q["scaling_efficiency"].get<double>(), 1.0) << q.dump();
  }
}

}  // namespace
}  // namespace ddpbench
