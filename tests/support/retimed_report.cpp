// retimed_report.cpp — see retimed_report.h.
#include "support/retimed_report.h"

namespace ddpbench::testing {

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
