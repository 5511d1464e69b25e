// reports_json_test.cpp — report.json is canonical, so it must round-trip: records -> JSON ->
// records loses nothing, and documents from another schema version or another tool are refused.
#include <gtest/gtest.h>

#include "errors.h"
#include "reports/json_reporter.h"

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
  r.config.sampler.dataset_size = 10;
  r.config.sampler.num_replicas = 3;
  r.config.sampler.padded = 2;
  r.results.push_back({"single", 1, {2.5, 2.25, 2.0}, {0.1, 0.1, 0.1}, "state_single.pt"});
  r.results.back().peak_device_memory_bytes = {123456789};
  return r;
}

TEST(JsonReport, RoundTripsEveryField) {
  const RunReport r = sample_report();
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j.at("schema_version"), kSchemaVersion);
  EXPECT_EQ(j.at("results")[0].at("losses")[1], 2.25);
  EXPECT_EQ(j.at("config").at("sampler").at("padded_per_epoch"), 2);
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

}  // namespace
}  // namespace ddpbench::reports
