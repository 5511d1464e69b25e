// report_audit_e2e_test.cpp — issue 51 defect 4, through the real binary: a report whose numbers
// were edited so that its configuration contradicts them renders no PASS. Each edit of a real
// report (a passing and a failing run of single, dp, ddp and zero) — a limit or tolerance widened,
// the dtype, comm hook, modes, amp or ZeRO stage changed beside the figures, a check deleted or
// repeated, a loss or a reference loss changed — is refused by `report` (exit 2, one line naming
// the field, nothing written) and by `gate`. Note [What a report's configuration implies].
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>

#include "support/cli_runner.h"
#include "support/report_edits.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using testing::ddpbench;

using Edit = testing::ReportEdit;

size_t audited_result_of(const json& doc, const std::string& mode) {
  for (size_t i = 0; i < doc["results"].size(); ++i) {
    if (doc["results"][i]["mode"] == mode) return i;
  }
  ADD_FAILURE() << "no result " << mode;
  return 0;
}

json& check_of(json& doc, const std::string& mode, const std::string& name) {
  json& checks = doc["results"][audited_result_of(doc, mode)]["checks"];
  for (json& c : checks) {
    if (c["name"] == name) return c;
  }
  ADD_FAILURE() << "no check " << name << " in " << mode;
  return checks[0];
}

void drop_check(json& doc, const std::string& mode, const std::string& name) {
  json& checks = doc["results"][audited_result_of(doc, mode)]["checks"];
  json kept = json::array();
  for (const json& c : checks) {
    if (c["name"] != name) kept.push_back(c);
  }
  checks = kept;
}

// The scenario's TOL.<key> in config.scenario_yaml set to `value`.
void set_tolerance_key(json& doc, const std::string& key, const std::string& value) {
  std::string yaml = doc["config"]["scenario_yaml"];
  yaml = std::regex_replace(yaml, std::regex("\n  " + key + ": [^ \n]+"),
                            "\n  " + key + ": " + value);
  doc["config"]["scenario_yaml"] = yaml;
}

// A failing run edited to read as a pass: every status pass, no first divergence.
void flip_to_pass(json& doc) {
  for (json& r : doc["results"]) {
    for (json& c : r["checks"]) c["status"] = "pass";
    r["first_divergence"]["stage"] = "";
  }
  doc["verdict"] = "pass";
  doc["passed"] = true;
}

class ReportAudit : public testing::TempDirTest {
 protected:
  // Two 2-rank linear_mse runs of every mode (a few seconds each): one passing with ZeRO stage 1,
  // one failing (a gradient fault on rank 1) with stage 3.
  static void SetUpTestSuite() {
    runs_ = testing::make_temp_dir("audit-runs");
    for (const auto& [name, extra] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"pass", {"--zero-stage", "1"}},
             {"fail", {"--zero-stage", "3", "--inject-fault", "grad:rank=1,step=1,eps=1e-3"}}}) {
      std::vector<std::string> args = {"run",     "--scenario", "linear_mse", "--gpus",
                                       "2",       "--steps",    "3",          "--modes",
                                       "single,dp,ddp,zero",    "--quiet",    "--out",
                                       runs_ + "/" + name};
      args.insert(args.end(), extra.begin(), extra.end());
      const auto r = ddpbench(args);
      ASSERT_EQ(r.exit_code, name == "pass" ? 0 : 1) << r.out << r.err;
    }
  }
  static void TearDownTestSuite() { fs::remove_all(runs_); }

  // Every edit of run `run`'s report refused by `report` and the first by `gate`.
  void expect_each_refused(const std::string& run, const std::vector<Edit>& edits) {
    const std::string original = runs_ + "/" + run + "/report.json";
    testing::expect_each_refused(original, edits, tmp_);
    // Unedited, the same report renders with the run's own verdict.
    const auto r = ddpbench({"report", original, "--out", path("unedited")});
    EXPECT_EQ(r.exit_code, run == "pass" ? 0 : 1) << r.out << r.err;
  }

  static inline std::string runs_;
};

TEST_F(ReportAudit, EditedLimitsAndConfigurationAreRefused) {
  const auto ddp_check = [](const std::string& name, const std::string& field, json value) {
    return [=](json& d) { check_of(d, "ddp", name)[field] = value; };
  };
  expect_each_refused(
      "pass",
      {
          {"gradients limit 2e-5 -> 1e-3", ddp_check("gradients", "limit", 1e-3), "held to"},
          {"loss atol 1e-5 -> 1e-3", ddp_check("loss", "atol", 1e-3), "held to"},
          {"loss rtol -> 0.1", ddp_check("loss", "rtol", 0.1), "held to"},
          {"dp updates limit -> 1", [](json& d) { check_of(d, "dp", "updates")["limit"] = 1.0; },
           "held to"},
          {"zero gradients limit -> 1e-3",
           [](json& d) { check_of(d, "zero", "gradients")["limit"] = 1e-3; }, "held to"},
          {"matches_ddp exact -> normalized 1e-3",
           [](json& d) {
             json& c = check_of(d, "zero", "matches_ddp");
             c["measure"] = "normalized";
             c["limit"] = 1e-3;
           },
           "held to"},
          {"dtype float32 -> float64 beside float32 limits",
           [](json& d) { d["config"]["dtype"] = "float64"; }, "held to"},
          {"dtype -> float16", [](json& d) { d["config"]["dtype"] = "float16"; }, "config.dtype"},
          {"comm hook allreduce -> fp16 beside unwidened limits",
           [](json& d) { d["config"]["ddp"]["comm_hook"] = "fp16"; }, "held to"},
          {"TOL.GRAD_FLOAT32 2e-05 -> 1e-3 in the config only",
           [](json& d) { set_tolerance_key(d, "GRAD_FLOAT32", "1e-3"); }, "held to"},
          {"TOL.FLOAT32_ATOL -> 1 in the config only",
           [](json& d) { set_tolerance_key(d, "FLOAT32_ATOL", "1"); }, "held to"},
          {"TOL.GRAD_FLOAT32 -> garbage",
           [](json& d) { set_tolerance_key(d, "GRAD_FLOAT32", "wide"); }, "TOL.GRAD_FLOAT32"},
          {"scenario_yaml emptied", [](json& d) { d["config"]["scenario_yaml"] = ""; }, "TOL"},
          {"results[ddp].mode -> zero",
           [](json& d) { d["results"][audited_result_of(d, "ddp")]["mode"] = "zero"; }, "repeats"},
          {"config.modes without zero",
           [](json& d) { d["config"]["modes"] = json::array({"single", "dp", "ddp"}); },
           "config.modes"},
          {"amp off -> bf16 with no autocast step",
           [](json& d) { d["config"]["amp"] = "bf16"; }, "autocast"},
          {"autocast steps recorded without amp",
           [](json& d) { d["results"][audited_result_of(d, "ddp")]["amp_vs_float32"]["steps"] = 3; },
           "autocast"},
          {"zero_stage 1 -> 3 beside full parameters",
           [](json& d) { d["config"]["zero_stage"] = 3; }, "config.zero_stage"},
          {"zero_stage 1 -> 2 beside full gradients",
           [](json& d) { d["config"]["zero_stage"] = 2; }, "config.zero_stage"},
          {"comparison lockstep -> free-running with no parameters check",
           [](json& d) { d["config"]["comparison"] = "free-running"; }, "parameters"},
      });
}

TEST_F(ReportAudit, EditedLossesAndChecksAreRefused) {
  const auto ddp = [](json& d) -> json& { return d["results"][audited_result_of(d, "ddp")]; };
  expect_each_refused(
      "pass",
      {
          {"ddp loss 3.0 beside single's", [&](json& d) { ddp(d)["losses"][1] = 3.0; }, "(loss)"},
          {"ddp loss 1.7e308", [&](json& d) { ddp(d)["losses"][0] = 1.7e308; }, "(loss)"},
          {"ddp loss -1.7e308", [&](json& d) { ddp(d)["losses"][2] = -1.7e308; }, "(loss)"},
          {"reference loss changed",
           [&](json& d) { ddp(d)["reference"]["losses"][2] = 7.5; }, "(loss)"},
          {"reference losses removed",
           [&](json& d) { ddp(d)["reference"]["losses"] = json::array(); }, "(loss)"},
          {"a reference loss appended",
           [&](json& d) { ddp(d)["reference"]["losses"].push_back(1.0); }, "(loss)"},
          {"loss check's items 3 -> 2",
           [](json& d) { check_of(d, "ddp", "loss")["items"] = 2; }, "(loss)"},
          {"loss check's max_abs_diff edited",
           [](json& d) { check_of(d, "ddp", "loss")["max_abs_diff"] = 1e-7; }, "(loss)"},
          {"ranks_bitwise_equal deleted",
           [](json& d) { drop_check(d, "ddp", "ranks_bitwise_equal"); }, "ranks_bitwise_equal"},
          {"matches_ddp deleted", [](json& d) { drop_check(d, "zero", "matches_ddp"); },
           "matches_ddp"},
          {"dp updates deleted", [](json& d) { drop_check(d, "dp", "updates"); }, "updates"},
          {"a check repeated",
           [&](json& d) { ddp(d)["checks"].push_back(check_of(d, "ddp", "gradients")); },
           "repeats"},
      });
}

// The issue's own edits of a failing run, each made to read as a pass.
TEST_F(ReportAudit, AFailingRunEditedToPassIsRefused) {
  expect_each_refused(
      "fail",
      {
          {"failing gradients and updates deleted, verdict pass",
           [](json& d) {
             for (const char* mode : {"ddp", "zero"}) {
               drop_check(d, mode, "gradients");
               drop_check(d, mode, "updates");
             }
             flip_to_pass(d);
           },
           "has no gradients check"},
          {"limits widened to 1, statuses flipped, first divergence cleared",
           [](json& d) {
             for (const char* mode : {"ddp", "zero"}) {
               check_of(d, mode, "gradients")["limit"] = 1.0;
               check_of(d, mode, "updates")["limit"] = 1.0;
               check_of(d, mode, "gradients")["outside"] = 0;
               check_of(d, mode, "updates")["outside"] = 0;
             }
             flip_to_pass(d);
           },
           "held to"},
          {"zero_stage 3 -> 1 beside sharded parameters",
           [](json& d) { d["config"]["zero_stage"] = 1; }, "config.zero_stage"},
      });
}

// What a report alone cannot prove: a limit widened with the configuration beside it is
// consistent, so `report` renders it (under the widened tolerance it names); `gate` refuses to
// compare it with a run judged by the scenario's own tolerances.
TEST_F(ReportAudit, AConsistentlyWidenedToleranceIsShownAndNotGated) {
  const std::string original = runs_ + "/pass/report.json";
  json doc = testing::read_json(original);
  for (json& r : doc["results"]) {
    for (json& c : r["checks"]) {
      if (c["name"] == "gradients" || c["name"] == "updates") c["limit"] = 0.5;
    }
  }
  set_tolerance_key(doc, "GRAD_FLOAT32", "0.5");
  const std::string file = path("widened.json");
  std::ofstream(file) << doc.dump();
  const auto r = ddpbench({"report", file, "--out", path("widened")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto g = ddpbench({"gate", "--baseline", original, "--current", file});
  EXPECT_EQ(g.exit_code, 2) << g.out << g.err;
  EXPECT_NE(g.err.find("scenario_yaml"), std::string::npos) << g.err;
}

}  // namespace
}  // namespace ddpbench
