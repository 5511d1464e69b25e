// comm_csv.cpp — render_comm_csv (comm_reporters.h): comm.csv, one row per (collective, size)
// with a header row; numbers "%.9g" as report.csv's (round-trippable, locale-free). Field values
// are names and numbers, never separators, so no quoting is needed.
#include <fmt/format.h>

#include "reports/comm/comm_reporters.h"

namespace ddpbench::reports {

std::string render_comm_csv(const CommReport& r) {
  std::string out =
      "backend,world_size,device,collective,size_bytes,count,dtype,time_us,algbw_gb_s,busbw_gb_s,"
      "wrong,emulated\n";
  for (const CommRow& row : r.rows) {
    out += fmt::format("{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{},{}\n", r.backend, r.world_size,
                       r.device, row.collective, row.bytes, row.count, row.dtype, row.time_us,
                       row.algbw_gb_s, row.busbw_gb_s, row.wrong, row.emulated ? "true" : "false");
  }
  return out;
}

}  // namespace ddpbench::reports
