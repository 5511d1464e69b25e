// comm_json.cpp — render_comm_json (comm_reporters.h): comm.json; what each field means is
// reports/METRICS.md, "ddpbench comm".
#include <nlohmann/json.hpp>

#include "reports/comm/comm_reporters.h"

namespace ddpbench::reports {

std::string render_comm_json(const CommReport& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const CommRow& row : r.rows) {
    rows.push_back({{"collective", row.collective},
                    {"size_bytes", row.bytes},
                    {"count", row.count},
                    {"dtype", row.dtype},
                    {"time_us", row.time_us},
                    {"algbw_gb_s", row.algbw_gb_s},
                    {"busbw_gb_s", row.busbw_gb_s},
                    {"wrong", row.wrong},
                    {"emulated", row.emulated}});
  }
  const nlohmann::json doc = {
      {"kind", "ddpbench comm"},
      {"backend", r.backend},
      {"world_size", r.world_size},
      {"device", r.device},
      {"launcher", r.launcher},
      {"host", r.host},
      {"iters", r.iters},
      {"warmup", r.warmup},
      {"memcpy", {{"bytes", r.memcpy_bytes}, {"gb_s", r.memcpy_gb_s}}},
      {"allreduce_busbw_to_memcpy", {{"size_bytes", r.goal_bytes}, {"ratio", r.busbw_to_memcpy}}},
      {"rows", rows},
      {"notes", r.notes},
      {"wrong", total_wrong(r)},
      {"passed", total_wrong(r) == 0},
      {"argv", r.argv}};
  return doc.dump(2) + "\n";
}

}  // namespace ddpbench::reports
