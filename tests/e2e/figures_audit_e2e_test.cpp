// figures_audit_e2e_test.cpp — issue 73 C7, through the real binary: a report.json stores per mode
// the timed steps (and its ranks' compute and wait) and figures derived from them; an edit of a
// derived figure is refused by `report` and `gate` (exit 2, one line naming the field, nothing
// written): the weak reasons of a CV 0.35 series, a p50, the comm_wait_s phase, the bytes the bus
// bandwidth counts, the scaling efficiency, config.repeats; and for HSDP (zero stage 2 over shard
// groups of 2 at 4 ranks) config.shard_group 0 and 4, a collective count edited to the `replica`
// fault's (2 all-reduces -> 1), and the fault's count edited back to hide it. Every other figure:
// tests/unit/compare_figures_audit_test.cpp, in process.
// Note [What a report's configuration implies] (compare/report_audit.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "support/cli_runner.h"
#include "support/report_edits.h"
#include "support/retimed_report.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using testing::ddpbench;

using Edit = testing::ReportEdit;

json& result(json& doc, const std::string& mode) {
  for (json& r : doc["results"]) {
    if (r["mode"] == mode) return r;
  }
  ADD_FAILURE() << "no result " << mode;
  return doc["results"][0];
}

json& throughput(json& doc, const std::string& mode) { return result(doc, mode)["throughput"]; }

class FiguresAudit : public testing::TempDirTest {
 protected:
  // Three runs of about 2 s each: every mode at 2 ranks, checked and timed; HSDP at 4 ranks
  // (2 replicas of a 2-way shard, zero stage 2), checked, clean and with a skipped replica
  // all-reduce at step 1.
  static void SetUpTestSuite() {
    runs_ = testing::make_temp_dir("figures-runs");
    const std::vector<std::string> hsdp = {"--gpus",
                                           "4",
                                           "--modes",
                                           "single,zero",
                                           "--zero-stage",
                                           "2",
                                           "--shard-group",
                                           "2",
                                           "--check-only",
                                           "--steps",
                                           "2"};
    std::vector<std::string> replica = hsdp;
    replica.insert(replica.end(), {"--inject-fault", "replica:step=1"});
    for (const auto& [name, extra, code] :
         std::vector<std::tuple<std::string, std::vector<std::string>, int>>{
             {"timed", {"--gpus", "2", "--modes", "single,dp,ddp,zero", "--steps", "3"}, 0},
             {"hsdp", hsdp, 0},
             {"replica", replica, 1}}) {
      std::vector<std::string> args = {"run",     "--scenario", "linear_mse",
                                       "--quiet", "--out",      runs_ + "/" + name};
      args.insert(args.end(), extra.begin(), extra.end());
      const auto r = ddpbench(args);
      ASSERT_EQ(r.exit_code, code) << name << r.out << r.err;
    }
  }
  static void TearDownTestSuite() { fs::remove_all(runs_); }

  // Every edit of run `run`'s report refused by `report`; by `gate` too for the first when
  // `gated`. Every process loads libtorch (about 0.5 s): what each adds must be worth it.
  void expect_each_refused(const std::string& run, const std::vector<Edit>& edits,
                           bool gated = false) {
    testing::expect_each_refused(runs_ + "/" + run + "/report.json", edits, tmp_, gated);
  }

  static inline std::string runs_;
};

// tests/unit/compare_figures_audit_test.cpp refuses each figure of a point in process; these go
// through the binary on real reports, with the figures only the whole report determines.
TEST_F(FiguresAudit, EditedTimingFiguresAreRefusedNamingTheField) {
  expect_each_refused(
      "timed",
      {
          {"a CV 0.35 series' weak_reasons emptied",
           [](json& d) {
             // Ten steps alternating 1 and 2 ms: no few-steps reason, only the CV's.
             std::vector<double> steps;
             for (int s = 0; s < 10; ++s) steps.push_back(s % 2 == 0 ? 1e-3 : 2e-3);
             testing::set_step_times(result(d, "ddp"), {steps});
             testing::refigure(d);
             throughput(d, "ddp")["weak_reasons"] = json::array();
           },
           "results[2].throughput.weak_reasons holds 0 reason(s) but the report's own step "
           "samples give 1: step-time CV 0.35 (> 0.10)"},
          {"dp p50 1 s", [](json& d) { throughput(d, "dp")["step_time_p50_s"] = 1.0; },
           "results[1].throughput.step_time_p50_s"},
          {"ddp comm_wait_s phase 0",
           [](json& d) { throughput(d, "ddp")["phases"]["comm_wait_s"] = 0.0; },
           "results[2].throughput.phases.comm_wait_s"},
          {"bytes allreduced doubled",
           [](json& d) {
             json& t = throughput(d, "ddp");
             t["bytes_allreduced_per_step"] = 2 * t["bytes_allreduced_per_step"].get<int64_t>();
           },
           "results[2].throughput.bytes_allreduced_per_step"},
          {"config.repeats 1 -> 3", [](json& d) { d["config"]["repeats"] = 3; }, "config.repeats"},
          {"ddp scaling efficiency 0.9",
           [](json& d) { result(d, "ddp")["scaling_efficiency"] = 0.9; },
           "results[2].scaling_efficiency"},
      },
      /*gated=*/true);
}

TEST_F(FiguresAudit, AnEditedMeshOrCollectiveCountIsRefused) {
  const auto zero = [](json& d) -> json& { return result(d, "zero"); };
  expect_each_refused(
      "hsdp", {
                  {"shard_group 2 -> 0 beside HSDP's counts",
                   [](json& d) { d["config"]["shard_group"] = 0; }, "config.shard_group 0"},
                  {"shard_group 2 -> 4 (the world)",
                   [](json& d) { d["config"]["shard_group"] = 4; }, "config.shard_group is 4"},
                  {"step 1's reduction_allreduce 2 -> 1 (the replica fault's count)",
                   [&](json& d) { zero(d)["collectives"][1]["reduction_allreduce"] = 1; },
                   "results[1].collectives[1] says rank 0 issued 1 all-reduce(s)"},
              });
  // The replica fault's run: its count edited back to 2 would hide what the check found.
  expect_each_refused("replica",
                      {{"the faulted step's reduction_allreduce 1 -> 2",
                        [&](json& d) { zero(d)["collectives"][1]["reduction_allreduce"] = 2; },
                        "(collectives) says rank 0 issued the wrong collectives in step 1"}});
  // Unedited, the failing HSDP report renders with its own verdict: the audit holds what a run
  // wrote (run audits its own report before writing it, so the clean runs are covered there).
  const auto r = ddpbench({"report", runs_ + "/replica", "--out", path("unedited")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
}

}  // namespace
}  // namespace ddpbench
