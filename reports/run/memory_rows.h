// memory_rows.h — the per-rank memory of a report's ddp and zero results as rows for the console
// and HTML reporters: mebibytes of parameters, gradients and optimizer state after the last step,
// the process's peak RSS, and, for zero, its optimizer state against ddp's divided by the world
// size (what sharding promises: 1/K of DDP's state per rank).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/run/run_record.h"

namespace ddpbench::reports {

struct MemoryRow {
  std::string mode;
  int64_t world_size = 1;
  int64_t rank = 0;
  double parameter_mib = 0;
  double gradient_mib = 0;
  double optimizer_state_mib = 0;
  double peak_rss_mib = 0;
  // zero: optimizer state bytes / (ddp's at the same rank and world size / shards); -1 without a
  // ddp result to hold it against.
  double optimizer_state_vs_ddp = -1;
  // What zero's state is split over: K, or under HSDP the shard group's S.
  int64_t shards = 1;
};

std::vector<MemoryRow> memory_rows(const RunReport& report);

// Bytes in mebibytes, as every memory and traffic figure of the reports shows them.
inline double mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace ddpbench::reports
