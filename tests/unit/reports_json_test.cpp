// reports_json_test.cpp — report.json is canonical, so it must round-trip: records -> JSON ->
// records loses nothing; documents from another schema version or another tool, fields of the wrong
// type or range, empty reports and repeated points are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "errors.h"
#include "reports/run/json_report_reader.h"
#include "reports/run/json_reporter.h"

namespace ddpbench::reports {
namespace {

RunReport sample_report() {
  RunReport r;
  r.context.ddpbench_version = "0.1.0";
  r.context.git_revision = "abc123";
  r.context.host = "h";
  r.context.cores = 2;
  r.context.compiler = "g++ 12";
  r.context.libtorch_version = "1.13.0";
  r.context.argv = {"ddpbench", "run"};
  r.config.scenario = "toy_cnn";
  r.config.modes = {"single"};
  r.config.steps = 3;
  r.config.global_batch = 16;
  r.config.local_batch = 16;
  r.config.threads = 2;
  r.config.sampler.dataset_size = 10;
  r.config.sampler.num_replicas = 3;
  r.config.sampler.padded = 2;
  r.results.push_back({Mode::kSingle, 1, {2.5, 2.25, 2.0}, {0.1, 0.1, 0.1}, "state_single.pt"});
  r.results.back().peak_device_memory_bytes = {123456789};
  r.results.back().evaluation = {
      reports::EvaluationStatus::kDone, "", "held-out", 101, 104, 3, 0.25, 1.5, 0.2475, 1.49, "s"};
  r.results.back().throughput.timed_steps = 5;
  r.results.back().throughput.step_time_mean_s = 0.0032;
  r.results.back().throughput.step_time_cv = 0.75;
  r.results.back().throughput.weak_reasons = {"5 timed steps (< 10)", "step-time CV 0.75"};
  return r;
}

TEST(JsonReport, RoundTripsEveryField) {
  const RunReport r = sample_report();
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j.at("schema_version"), kSchemaVersion);
  EXPECT_EQ(j.at("results")[0].at("losses")[1], 2.25);
  EXPECT_EQ(j.at("config").at("sampler").at("padded_per_epoch"), 2);
  EXPECT_EQ(j.at("results")[0].at("evaluation").at("padded"), 3);
  EXPECT_EQ(j.at("results")[0].at("throughput").at("step_time_cv"), 0.75);
  EXPECT_EQ(j.at("results")[0].at("throughput").at("weak_reasons").size(), 2u);
  const RunReport back = report_from_json(nlohmann::json::parse(JsonReporter().render(r)));
  EXPECT_EQ(to_json(back), j);
}

TEST(JsonReport, RefusesForeignDocuments) {
  EXPECT_THROW(report_from_json(nlohmann::json{{"hello", 1}}), InputError);
  nlohmann::json j = to_json(sample_report());
  j["schema_version"] = kSchemaVersion + 1;
  EXPECT_THROW(report_from_json(j), InputError);
  j = to_json(sample_report());
  j["config"].erase("scenario");
  EXPECT_THROW(report_from_json(j), InputError);
}

// Out-of-range or mistyped numbers are refused naming the field, never cast (nlohmann converts
// 1e30 to int64 by a plain cast: world_size became -9223372036854775808 in report.csv).
TEST(JsonReport, RefusesOutOfRangeAndMistypedFieldsNamingThem) {
  struct Edit {
    std::function<void(nlohmann::json&)> apply;
    const char* field;
  };
  const std::vector<Edit> edits = {
      {[](auto& j) { j["results"][0]["world_size"] = 1e30; }, "results[0].world_size"},
      {[](auto& j) { j["results"][0]["world_size"] = 0; }, "results[0].world_size"},
      {[](auto& j) { j["results"][0]["world_size"] = 2.5; }, "results[0].world_size"},
      {[](auto& j) { j["results"][0]["world_size"] = "2"; }, "results[0].world_size"},
      {[](auto& j) { j["config"]["world_size"] = 18446744073709551615ULL; }, "config.world_size"},
      {[](auto& j) { j["config"]["steps"] = -3; }, "config.steps"},
      {[](auto& j) { j["config"]["sampler"]["dataset_size"] = 1e300; },
       "config.sampler.dataset_size"},
      {[](auto& j) { j["results"][0]["losses"][1] = "x"; }, "results[0].losses[1]"},
      {[](auto& j) { j["results"][0]["throughput"]["samples_per_s"] = -1; },
       "results[0].throughput.samples_per_s"},
      {[](auto& j) { j["results"][0]["throughput"]["samples_per_s"] = nullptr; },
       "results[0].throughput.samples_per_s"},
      {[](auto& j) { j["results"][0]["mode"] = "dpp"; }, "results[0].mode"},
      {[](auto& j) { j["passed"] = "yes"; }, "passed"},
      {[](auto& j) { j["verdict"] = "ok"; }, "verdict"},
      {[](auto& j) {
         j["config"]["sampler"]["preview"] = {{1, -1}};
       },
       "config.sampler.preview[0][1]"},
      {[](auto& j) {
         j["config"]["sampler"]["preview"] = {{1, 2}};
         j["config"]["sampler"]["preview_padding"] = {{false, 3}};
       },
       "config.sampler.preview_padding[0][1]"},
      {[](auto& j) {
         j["config"]["sampler"]["preview"] = {{1, 2}};
         j["config"]["sampler"]["preview_padding"] = {{false}};
       },
       "config.sampler.preview_padding"},
  };
  for (const auto& e : edits) {
    nlohmann::json j = to_json(sample_report());
    e.apply(j);
    try {
      report_from_json(j);
      ADD_FAILURE() << e.field << " was accepted: " << j.dump();
    } catch (const InputError& err) {
      EXPECT_NE(std::string(err.what()).find(e.field), std::string::npos) << err.what();
    }
  }
  // Issue 31 defect 8: nlohmann reads a non-negative integer from text as unsigned, and only its
  // upper bound was checked: 0 passed every lower bound of 1 in a file (not in memory).
  for (const char* field : {"world_size", "steps", "global_batch", "threads", "local_batch"}) {
    nlohmann::json j = to_json(sample_report());
    j["config"][field] = 0;
    try {
      report_from_json(nlohmann::json::parse(j.dump()));
      ADD_FAILURE() << field << " 0 was accepted from a file";
    } catch (const InputError& err) {
      EXPECT_NE(std::string(err.what()).find(std::string("config.") + field), std::string::npos)
          << err.what();
    }
  }
  // A diverged loss is written as null and reads back as NaN.
  nlohmann::json j = to_json(sample_report());
  j["results"][0]["losses"][1] = nullptr;
  EXPECT_TRUE(std::isnan(report_from_json(j).results[0].losses[1]));
}

// An empty report would say PASS with nothing judged; two points with one key would be matched
// once by the gate.
TEST(JsonReport, RefusesNoResultsAndRepeatedPoints) {
  nlohmann::json j = to_json(sample_report());
  j["results"] = nlohmann::json::array();
  try {
    report_from_json(j);
    ADD_FAILURE() << "an empty report was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nothing to judge"), std::string::npos) << e.what();
  }
  j = to_json(sample_report());
  j["results"].push_back(j["results"][0]);
  try {
    report_from_json(j);
    ADD_FAILURE() << "a repeated point was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("single/1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ddpbench::reports
