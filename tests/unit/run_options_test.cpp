// run_options_test.cpp — the run options table (requests/run_options.h) is true to what it
// declares: every row names a report.json field that exists (or argv, or config.options), every
// scenario key a row sets is a key scenario files have, flags are unique, and config.options, where
// an option without a field of its own is recorded, is written, read back and absent when empty.
#include "requests/run_options.h"

#include <gtest/gtest.h>

#include <set>

#include "reports/run/json_report_reader.h"
#include "reports/run/json_reporter.h"
#include "reports/run/record_lookup.h"
#include "scenarios/scenario_keys.h"

namespace ddpbench::run {
namespace {

struct RowCopies {
  std::vector<requests::RunOption>& out;
  template <typename T>
  void operator()(requests::RunOption&& row, const T&) {
    out.push_back(std::move(row));
  }
};

std::vector<requests::RunOption> rows() {
  std::vector<requests::RunOption> out;
  RowCopies copy{out};
  const requests::RunRequest fresh;
  requests::run_options(copy, fresh);
  return out;
}

TEST(RunOptions, EveryRowNamesAFieldOfTheReport) {
  const std::vector<requests::RunOption> all = rows();
  ASSERT_GT(all.size(), 60u);
  for (const requests::RunOption& row : all) {
    if (row.report == requests::kReportArgv || row.report == requests::kReportOptions) continue;
    EXPECT_TRUE(reports::config_field_affects(row.report).has_value())
        << row.flag << " is reported as '" << row.report << "', which report.json lacks";
  }
  EXPECT_FALSE(reports::config_field_affects("ddp.no_such_field").has_value());
  EXPECT_EQ(reports::config_field_affects("ddp.impl"), reports::Affects::kNumbers);
  EXPECT_EQ(reports::config_field_affects("warmup_steps"), reports::Affects::kTimings);
  EXPECT_EQ(reports::config_field_affects("context.argv"), reports::Affects::kReport);
}

TEST(RunOptions, FlagsAreUniqueAndScenarioKeysExist) {
  std::set<std::string> flags;
  std::set<std::string> keys;
  for (const scenarios::ScenarioKey& k : scenarios::scenario_keys()) keys.insert(k.name);
  for (const requests::RunOption& row : rows()) {
    EXPECT_TRUE(flags.insert(requests::primary_flag(row)).second) << row.flag << " twice";
    if (!row.scenario_key.empty()) EXPECT_EQ(keys.count(row.scenario_key), 1u) << row.flag;
  }
  EXPECT_EQ(requests::key_flags(requests::RunRequest{}).size(), 11u);
}

// Where a new option's value lands: written when it has elements, absent otherwise, read back.
TEST(RunOptions, ConfigOptionsAreWrittenOnlyWhenGiven) {
  reports::RunReport report;
  report.context.device = "cpu";
  const nlohmann::json empty = reports::to_json(report);
  EXPECT_FALSE(empty["config"].contains("options")) << "a run without one adds nothing";

  report.config.options = {"--new-option 3"};
  const nlohmann::json given = reports::to_json(report);
  ASSERT_TRUE(given["config"].contains("options"));
  EXPECT_EQ(given["config"]["options"], nlohmann::json::array({"--new-option 3"}));
  EXPECT_EQ(requests::recorded_options(requests::RunRequest{}), std::vector<std::string>{})
      << "no row is recorded only as given today";
}

}  // namespace
}  // namespace ddpbench::run
