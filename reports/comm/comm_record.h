// comm_record.h — the plain record of a `ddpbench comm` run (commands/execute_comm.h fills it,
// comm_reporters.h formats it): one row per (collective, size), nccl-tests' columns, and the
// host's memcpy bandwidth the bus bandwidths are held against. Meanings: reports/METRICS.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::reports {

struct CommRow {
  std::string collective;  // allreduce, broadcast, allgather, reduce_scatter
  int64_t bytes = 0;       // nccl-tests' size: per-rank buffer (allgather: output, reduce_scatter:
                           // input, i.e. world x count elements)
  int64_t count = 0;       // elements per rank (allgather: sent, reduce_scatter: received)
  std::string dtype;
  double time_us = 0;     // per call: each rank's mean over the timed iterations, max over ranks
  double algbw_gb_s = 0;  // bytes / time / 1e9
  double busbw_gb_s = 0;  // algbw x nccl-tests' bus factor
  int64_t wrong = 0;      // result elements that differ from the expectation, summed over ranks
  bool emulated = false;  // the backend has no such collective; emulated (see CommReport::notes)
};

struct CommReport {
  std::string backend;
  int world_size = 1;
  std::string device;    // cpu, cuda
  std::string launcher;  // ddpbench (spawned), mpirun, torchrun, srun
  std::string host;
  int64_t iters = 0;
  int64_t warmup = 0;
  std::vector<CommRow> rows;
  // Single-thread memcpy of the largest size on this host (metrics/memcpy_bandwidth.h).
  int64_t memcpy_bytes = 0;
  double memcpy_gb_s = 0;
  // The largest allreduce row's busbw / memcpy_gb_s (0 without an allreduce row).
  int64_t goal_bytes = 0;
  double busbw_to_memcpy = 0;
  std::vector<std::string> notes;  // e.g. why a collective is emulated on this backend
  std::vector<std::string> argv;
};

inline int64_t total_wrong(const CommReport& r) {
  int64_t wrong = 0;
  for (const CommRow& row : r.rows) wrong += row.wrong;
  return wrong;
}

}  // namespace ddpbench::reports
