// retimed_report.cpp — see retimed_report.h.
#include "support/retimed_report.h"

#include <algorithm>

#include "stats/step_figures.h"
#include "stats/straggler.h"
#include "stats/timing_spread.h"

namespace ddpbench::testing {
namespace {

using nlohmann::json;

std::vector<std::vector<double>> repeats_of(const json& t) {
  std::vector<std::vector<double>> steps;
  for (const json& r : t["repeats"]) steps.push_back(r["step_times_s"].get<std::vector<double>>());
  return steps;
}

// compare::derive_figures over JSON: every figure of `result`'s throughput its samples give.
void derive(json& result) {
  json& t = result["throughput"];
  const std::vector<std::vector<double>> steps = repeats_of(t);
  std::vector<double> pooled;
  for (const auto& r : steps) pooled.insert(pooled.end(), r.begin(), r.end());
  const stats::TimingSpread s = stats::timing_spread(steps);
  const stats::StepFigures f = stats::step_figures(pooled);
  const int64_t world = result["world_size"].get<int64_t>();
  t["timed_steps"] = f.steps;
  t["spread"] = {{"repeats", s.repeats},
                 {"repeat_medians_s", s.repeat_medians},
                 {"median_step_s", s.median},
                 {"median_low_s", s.median_interval.lo},
                 {"median_high_s", s.median_interval.hi},
                 {"median_confidence", s.median_interval.confidence},
                 {"cv", s.cv},
                 {"repeat_spread", s.repeat_spread}};
  const double samples_per_s = s.median > 0 ? t["samples_per_step"].get<double>() / s.median : 0.0;
  t["samples_per_s"] = samples_per_s;
  t["samples_per_s_per_device"] = samples_per_s / static_cast<double>(std::max<int64_t>(1, world));
  t["step_time_p50_s"] = f.p50;
  t["step_time_p90_s"] = f.p90;
  t["step_time_p99_s"] = f.p99;
  t["step_time_mean_s"] = f.mean;
  t["step_time_cv"] = f.cv;
  t["weak_reasons"] =
      stats::weak_reasons(f.steps, f.cv, result["scaling_efficiency"].get<double>());
  t["bus_bandwidth_gb_s"] = stats::allreduce_bus_bandwidth(
                                t["bytes_allreduced_per_step"].get<int64_t>(), world, s.median) /
                            1e9;
  if (!t.contains("ranks") || t["ranks"].empty()) return;
  std::vector<std::vector<double>> compute;
  double wait_sum = 0;
  const size_t n = t["ranks"][0]["comm_wait_s"].size();
  for (size_t i = 0; i < n; ++i) {
    double longest = 0;
    for (const json& r : t["ranks"]) longest = std::max(longest, r["comm_wait_s"][i].get<double>());
    wait_sum += longest;
  }
  for (const json& r : t["ranks"]) compute.push_back(r["compute_s"].get<std::vector<double>>());
  t["phases"]["comm_wait_s"] = n > 0 ? wait_sum / static_cast<double>(n) : 0.0;
  const stats::StragglerScores g = stats::straggler_scores(compute);
  t["straggler"] = {{"rank", g.rank},
                    {"cost_s", g.cost_s},
                    {"slowest_steps", g.slowest_steps},
                    {"vs_fastest", g.vs_fastest},
                    {"vs_own_best", g.vs_own_best},
                    {"summary", g.summary}};
}

}  // namespace

void set_step_times(json& result, const std::vector<std::vector<double>>& steps) {
  json& t = result["throughput"];
  t["repeats"] = json::array();
  for (const auto& r : steps) {
    // Each repeat measured on a quiet runner (no other process's load), as the series' noise is
    // the test's own.
    double wall_s = 0;
    for (double s : r) wall_s += s;
    const json quiet = {{"wall_s", wall_s},    {"others_cpu_share", 0.0}, {"steal_share", 0.0},
                        {"iowait_share", 0.0}, {"load_average_1m", 0.0},  {"cpu_mhz", 0.0}};
    t["repeats"].push_back({{"step_times_s", r}, {"runner_load", quiet}});
  }
  if (t.contains("ranks")) {
    for (json& r : t["ranks"]) {
      r["compute_s"] = steps.empty() ? std::vector<double>{} : steps.front();
      r["comm_wait_s"] = std::vector<double>(r["compute_s"].size(), 0.0);
    }
  }
  derive(result);
}

void scale_step_times(json& result, double factor) {
  json& t = result["throughput"];
  for (json& repeat : t["repeats"]) {
    for (json& s : repeat["step_times_s"]) s = s.get<double>() * factor;
  }
  if (t.contains("ranks")) {
    for (json& r : t["ranks"]) {
      for (const char* key : {"compute_s", "comm_wait_s"}) {
        for (json& v : r[key]) v = v.get<double>() * factor;
      }
    }
  }
  for (auto& [phase, seconds] : t["phases"].items()) seconds = seconds.get<double>() * factor;
  derive(result);
}

void add_comm_wait(json& result, double seconds) {
  json& t = result["throughput"];
  for (json& repeat : t["repeats"]) {
    for (json& s : repeat["step_times_s"]) s = s.get<double>() + seconds;
  }
  if (t.contains("ranks")) {
    for (json& r : t["ranks"]) {
      for (json& v : r["comm_wait_s"]) v = v.get<double>() + seconds;
    }
  }
  t["phases"]["comm_wait_s"] = t["phases"]["comm_wait_s"].get<double>() + seconds;
  derive(result);
}

void refigure(json& doc) {
  double baseline = 0;
  for (const json& r : doc["results"]) {
    if (r["mode"] == "single" && r["throughput"]["timed_steps"].get<int64_t>() > 0) {
      baseline = r["throughput"]["samples_per_s"].get<double>();
    }
  }
  for (json& r : doc["results"]) {
    if (r["mode"] == "single") continue;
    r["scaling_efficiency"] =
        baseline > 0 ? stats::scaling_efficiency(r["throughput"]["samples_per_s"].get<double>(),
                                                 r["world_size"].get<int64_t>(), baseline)
                     : -1.0;
    derive(r);
  }
}

}  // namespace ddpbench::testing
