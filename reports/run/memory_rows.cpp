// memory_rows.cpp — see memory_rows.h.
#include "reports/run/memory_rows.h"

namespace ddpbench::reports {
namespace {

const ModeResult* ddp_at(const RunReport& report, int64_t world_size) {
  for (const ModeResult& r : report.results) {
    if (r.mode == Mode::kDdp && r.world_size == world_size && !r.memory.empty()) return &r;
  }
  return nullptr;
}

}  // namespace

std::vector<MemoryRow> memory_rows(const RunReport& report) {
  std::vector<MemoryRow> rows;
  for (const ModeResult& r : report.results) {
    const ModeResult* ddp = r.mode == Mode::kZero ? ddp_at(report, r.world_size) : nullptr;
    for (const RankMemoryRecord& m : r.memory) {
      MemoryRow row{
          std::string(name_of(r.mode)), r.world_size,          m.rank,
          mib(m.parameter_bytes),       mib(m.gradient_bytes), mib(m.optimizer_state_bytes),
          mib(m.peak_rss_bytes)};
      // HSDP splits the state over a shard group, and each replica holds it again.
      row.shards = report.config.shard_group > 0 ? report.config.shard_group : r.world_size;
      if (ddp != nullptr && static_cast<size_t>(m.rank) < ddp->memory.size()) {
        const int64_t full = ddp->memory[static_cast<size_t>(m.rank)].optimizer_state_bytes;
        if (full > 0) {
          row.optimizer_state_vs_ddp =
              static_cast<double>(m.optimizer_state_bytes) /
              (static_cast<double>(full) / static_cast<double>(row.shards));
        }
      }
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace ddpbench::reports
