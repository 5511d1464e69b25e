// reports_verdict_test.cpp — the one verdict (reports/run/verdict.h): a status is what a check's
// numbers say, a run's verdict is what its checks, losses and divergences say, nothing compared is
// never a pass, and a report.json whose stored words contradict its numbers is refused naming the
// field (issue 31, defect 7: edited reports were believed).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "errors.h"
#include "reports/run/console_reporter.h"
#include "reports/run/json_report_reader.h"
#include "reports/run/json_reporter.h"
#include "reports/run/verdict.h"
#include "support/judged_checks.h"

namespace ddpbench::reports {
namespace {

using test::judged_check;

RunReport passing_run() {
  RunReport r;
  r.config.scenario = "linear_mse";
  r.config.modes = {"single", "ddp"};
  r.config.steps = 2;
  r.config.global_batch = 8;
  r.config.local_batch = 4;
  r.config.world_size = 2;
  r.config.threads = 1;
  r.config.sampler.num_replicas = 2;
  ModeResult single;
  single.mode = Mode::kSingle;
  single.losses = {1.0, 0.9};
  ModeResult ddp;
  ddp.mode = Mode::kDdp;
  ddp.world_size = 2;
  ddp.losses = {1.0, 0.9};
  ddp.checks = {judged_check(Stage::kLoss, CheckStatus::kPass, 2),
                judged_check(Stage::kGradients, CheckStatus::kPass, 6)};
  r.results = {single, ddp};
  return test::with_verdict(r);
}

// What `report` and `gate` read: the JSON text of the report.
RunReport reread(const nlohmann::json& j) {
  return report_from_json(nlohmann::json::parse(j.dump()));
}

void expect_refused(const nlohmann::json& j, const std::string& field) {
  try {
    reread(j);
    ADD_FAILURE() << "accepted: " << j.dump().substr(0, 400);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(Verdict, ACheckPassesOnlyWhenItsNumbersAreWithinItsLimit) {
  const CheckRecord ok = judged_check(Stage::kGradients, CheckStatus::kPass);
  EXPECT_EQ(check_status(ok, {}), CheckStatus::kPass);
  CheckRecord c = ok;
  c.outside = 2;
  EXPECT_EQ(check_status(c, {}), CheckStatus::kFail);
  c = ok;
  c.error = 1.5;  // beyond limit 1
  EXPECT_EQ(check_status(c, {}), CheckStatus::kFail);
  c = ok;
  c.error = NAN;
  EXPECT_EQ(check_status(c, {}), CheckStatus::kFail);
  c = ok;
  c.max_abs_diff = 1e9;  // no passing comparison can hold that difference
  EXPECT_EQ(check_status(c, {}), CheckStatus::kFail);
  c = ok;
  c.items = 0;  // nothing compared
  EXPECT_EQ(check_status(c, {}), CheckStatus::kFail);
  DivergenceRecord first;
  first.stage = Stage::kGradients;
  EXPECT_EQ(check_status(ok, first), CheckStatus::kFail);
  first.stage = Stage::kLoss;
  EXPECT_EQ(check_status(ok, first), CheckStatus::kPass);
  c = ok;
  c.divergent = 1;
  EXPECT_EQ(check_status(c, {}), CheckStatus::kExpectedDivergence);
}

TEST(Verdict, NothingJudgedIsNeverAPass) {
  RunReport r = passing_run();
  EXPECT_EQ(r.verdict, Verdict::kPass);
  for (auto& m : r.results) m.checks.clear();
  EXPECT_EQ(run_verdict(r), Verdict::kNotJudged);
  const std::string text = ConsoleReporter().render(test::with_verdict(r));
  EXPECT_EQ(text.find("\nPASS"), std::string::npos) << text;
  EXPECT_NE(text.find("NOT JUDGED"), std::string::npos) << text;
}

// As Note [What a mode was judged against] has it, checks of the ranks against each other alone
// make a PASS that says so, in the console and every format's verdict text; a mode judged against
// its reference at only some of its checked steps is NOT JUDGED, naming the steps it could not
// judge.
TEST(Verdict, APassSaysWhatItRestsOnAndUnjudgedStepsAreNotAPass) {
  RunReport ranks_only = passing_run();
  ranks_only.config.modes = {"ddp"};
  ranks_only.results.erase(ranks_only.results.begin());
  CheckRecord agree = judged_check(Stage::kRanksBitwiseEqual, CheckStatus::kPass);
  ranks_only.results[0].checks = {agree};
  ranks_only = test::with_verdict(ranks_only);
  EXPECT_EQ(ranks_only.verdict, Verdict::kPass);
  EXPECT_EQ(verdict_text(ranks_only),
            "PASS (ddp: consistent across ranks, not compared with a reference: add single to "
            "--modes)");
  EXPECT_NE(ConsoleReporter().render(ranks_only).find("consistent across ranks"),
            std::string::npos);
  EXPECT_EQ(verdict_text(passing_run()), "PASS");

  RunReport first_step_only = passing_run();
  for (CheckRecord& c : first_step_only.results[1].checks) c.steps_compared = {0};
  EXPECT_EQ(run_verdict(first_step_only), Verdict::kNotJudged);
  first_step_only = test::with_verdict(first_step_only);
  EXPECT_NE(
      verdict_text(first_step_only).find("ddp: judged at 1 of its 2 checked steps; at step 1"),
      std::string::npos)
      << verdict_text(first_step_only);
  // The stored verdict is recomputed: an edit to PASS is refused, naming the verdict.
  nlohmann::json edited = to_json(first_step_only);
  edited["verdict"] = "pass";
  edited["passed"] = true;
  expect_refused(edited, "verdict");
  // A report of schema 11 records no steps: its checks are taken as covering every step.
  first_step_only.schema_version = 11;
  EXPECT_EQ(run_verdict(first_step_only), Verdict::kPass);
}

TEST(Verdict, ALossThatIsNotFiniteFailsAJudgedRun) {
  RunReport r = passing_run();
  r.results[1].losses[1] = NAN;
  EXPECT_EQ(run_verdict(r), Verdict::kFail);
}

TEST(Verdict, RecordsFromTheWriterReadBackWithTheSameVerdict) {
  for (CheckStatus s : {CheckStatus::kPass, CheckStatus::kFail, CheckStatus::kExpectedDivergence}) {
    RunReport r = passing_run();
    r.results[1].checks[1] = judged_check(Stage::kGradients, s);
    r = test::with_verdict(r);
    const RunReport back = reread(to_json(r));
    EXPECT_EQ(back.verdict, r.verdict);
    EXPECT_EQ(back.results[1].checks[1].status, s);
  }
}

// Issue 31 defect 7, every edit of the battery: the stored word against the numbers.
TEST(Verdict, EditedReportsAreRecomputedOrRefusedNamingTheField) {
  const nlohmann::json good = to_json(passing_run());
  ASSERT_NO_THROW(reread(good));
  struct Edit {
    std::function<void(nlohmann::json&)> apply;
    std::string field;
  };
  const std::vector<Edit> edits = {
      // A failing check's status edited to pass, with the verdict to match.
      {[](auto& j) {
         j["results"][1]["checks"][1]["outside"] = 2;
         j["results"][1]["checks"][1]["error"] = 7.0;
       },
       "results[1].checks[1].status"},
      {[](auto& j) { j["results"][1]["checks"][1]["max_abs_diff"] = 1e9; },
       "results[1].checks[1].status"},
      {[](auto& j) { j["results"][1]["checks"][0]["items"] = 0; }, "results[1].checks[0].status"},
      // A widened limit is not a pass.
      {[](auto& j) { j["results"][1]["checks"][1]["limit"] = 1e6; }, "results[1].checks[1].limit"},
      {[](auto& j) { j["results"][1]["checks"][1]["divergent"] = 9; }, "results[1].checks[1]"},
      // A recorded first divergence beside passing checks.
      {[](auto& j) {
         j["results"][1]["first_divergence"]["stage"] = "gradients";
         j["results"][1]["first_divergence"]["step"] = 1;
       },
       "results[1].checks[1].status"},
      {[](auto& j) { j["results"][1]["first_divergence"]["stage"] = "buffers"; },
       "results[1].first_divergence.stage"},
      // NaN losses (null in JSON) in a judged mode.
      {[](auto& j) { j["results"][1]["losses"][1] = nullptr; }, "verdict"},
      // The verdict or passed edited alone.
      {[](auto& j) { j["verdict"] = "fail"; }, "verdict"},
      {[](auto& j) { j["passed"] = false; }, "passed"},
      {[](auto& j) { j["results"][1]["checks"][1]["status"] = "fail"; },
       "results[1].checks[1].status"},
      {[](auto& j) { j["results"][1]["checks"][1]["status"] = "maybe"; },
       "results[1].checks[1].status"},
  };
  for (const auto& e : edits) {
    nlohmann::json j = good;
    e.apply(j);
    expect_refused(j, e.field);
  }
}

// A report whose checks failed, edited to say pass everywhere: refused, whatever the words say.
TEST(Verdict, AFailingReportEditedToPassIsRefused) {
  RunReport r = passing_run();
  r.results[1].checks[1] = judged_check(Stage::kGradients, CheckStatus::kFail);
  r.results[1].first_divergence.stage = Stage::kGradients;
  r = test::with_verdict(r);
  nlohmann::json j = to_json(r);
  j["results"][1]["checks"][1]["status"] = "pass";
  j["results"][1]["first_divergence"]["stage"] = "";
  j["verdict"] = "pass";
  j["passed"] = true;
  expect_refused(j, "results[1].checks[1].status");
}

// Prose cannot change a verdict: counts shown to people are rendered from the numbers.
TEST(Verdict, TheCountsShownAreTheNumbersNotTheDetail) {
  CheckRecord c = judged_check(Stage::kGradients, CheckStatus::kFail, 6);
  c.outside = 2;
  c.detail = "all fine";
  EXPECT_NE(describe_counts(c).find("2 of 6 items outside"), std::string::npos);
  c = judged_check(Stage::kGradients, CheckStatus::kPass, 6);
  c.detail = "2 of 6 items outside";
  EXPECT_EQ(describe_counts(c).find("outside"), std::string::npos) << describe_counts(c);
}

}  // namespace
}  // namespace ddpbench::reports
