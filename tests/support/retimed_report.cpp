// retimed_report.cpp — see retimed_report.h.
#include "support/retimed_report.h"

#include "stats/timing_spread.h"

namespace ddpbench::testing {

void set_step_times(nlohmann::json& result, const std::vector<std::vector<double>>& steps) {
  nlohmann::json& t = result["throughput"];
  const stats::TimingSpread s = stats::timing_spread(steps);
  t["repeats"] = nlohmann::json::array();
  int64_t n = 0;
  for (const auto& r : steps) {
    t["repeats"].push_back({{"step_times_s", r}});
    n += static_cast<int64_t>(r.size());
  }
  t["timed_steps"] = n;
  t["spread"] = {{"repeats", s.repeats},
                 {"repeat_medians_s", s.repeat_medians},
                 {"median_step_s", s.median},
                 {"median_low_s", s.median_interval.lo},
                 {"median_high_s", s.median_interval.hi},
                 {"median_confidence", s.median_interval.confidence},
                 {"cv", s.cv},
                 {"repeat_spread", s.repeat_spread}};
  t["samples_per_s"] = t["samples_per_step"].get<double>() / s.median;
}

void scale_step_times(nlohmann::json& result, double factor) {
  nlohmann::json& t = result["throughput"];
  for (auto& repeat : t["repeats"]) {
    for (auto& s : repeat["step_times_s"]) s = s.get<double>() * factor;
  }
  nlohmann::json& spread = t["spread"];
  for (auto& m : spread["repeat_medians_s"]) m = m.get<double>() * factor;
  for (const char* key : {"median_step_s", "median_low_s", "median_high_s"}) {
    spread[key] = spread[key].get<double>() * factor;
  }
  for (const char* key :
       {"step_time_p50_s", "step_time_p90_s", "step_time_p99_s", "step_time_mean_s"}) {
    t[key] = t[key].get<double>() * factor;
  }
  for (const char* key : {"samples_per_s", "samples_per_s_per_device", "bus_bandwidth_gb_s"}) {
    t[key] = t[key].get<double>() / factor;
  }
}

}  // namespace ddpbench::testing
