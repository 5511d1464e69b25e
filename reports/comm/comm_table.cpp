// comm_table.cpp — render_comm_table and comm_verdict_line (comm_reporters.h): nccl-tests'
// column layout, comment lines starting with '#', so the table stays grep-friendly.
#include <fmt/format.h>

#include "reports/comm/comm_reporters.h"

namespace ddpbench::reports {

std::string comm_verdict_line(const CommReport& r) {
  const int64_t wrong = total_wrong(r);
  if (wrong == 0) {
    return fmt::format("OK: every result of {} checked collective calls is exact (#wrong 0)",
                       r.rows.size());
  }
  int64_t failing = 0;
  for (const CommRow& row : r.rows) failing += row.wrong > 0 ? 1 : 0;
  return fmt::format("FAILED: {} wrong element{} in {} of {} checked collective calls", wrong,
                     wrong == 1 ? "" : "s", failing, r.rows.size());
}

std::string render_comm_table(const CommReport& r) {
  std::string out = fmt::format(
      "# ddpbench comm: backend {}, {} rank{} ({}), device {}, {} timed iterations after {} "
      "warm-up, host {}\n",
      r.backend, r.world_size, r.world_size == 1 ? "" : "s", r.launcher, r.device, r.iters,
      r.warmup, r.host);
  out += fmt::format("# {:>14} {:>12} {:>11} {:>8} {:>11} {:>9} {:>9} {:>7}\n", "collective",
                     "size(B)", "count", "type", "time(us)", "algbw", "busbw", "#wrong");
  out += fmt::format("# {:>14} {:>12} {:>11} {:>8} {:>11} {:>9} {:>9} {:>7}\n", "", "", "", "", "",
                     "(GB/s)", "(GB/s)", "");
  for (const CommRow& row : r.rows) {
    out += fmt::format("  {:>14} {:>12} {:>11} {:>8} {:>11.1f} {:>9.3f} {:>9.3f} {:>7}{}\n",
                       row.collective, row.bytes, row.count, row.dtype, row.time_us, row.algbw_gb_s,
                       row.busbw_gb_s, row.wrong, row.emulated ? "  (emulated)" : "");
  }
  out += fmt::format("# memcpy, 1 thread, {} B: {:.3f} GB/s\n", r.memcpy_bytes, r.memcpy_gb_s);
  if (r.goal_bytes > 0) {
    out += fmt::format("# allreduce busbw at {} B = {:.3f} x memcpy\n", r.goal_bytes,
                       r.busbw_to_memcpy);
  }
  for (const std::string& note : r.notes) out += fmt::format("# note: {}\n", note);
  out += "# " + comm_verdict_line(r) + "\n";
  return out;
}

}  // namespace ddpbench::reports
