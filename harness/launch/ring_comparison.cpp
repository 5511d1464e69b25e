// ring_comparison.cpp — see ring_comparison.h.
#include "launch/ring_comparison.h"

#include <ATen/ATen.h>

#include <cstring>

namespace ddpbench::launch {
namespace {

using comm::FlightEntry;
using comm::FlightLog;

constexpr int64_t kColumns = 8;
constexpr int64_t kRows = comm::FlightRecorder::kDefaultCapacity + 1;  // a header row, the ring

// Row 0: issued, chain, entries; then one row per entry. A dtype name fits its 8 bytes in one
// int64 (FlightEntry::dtype holds at most 9 characters; the names ddpbench records have 8).
at::Tensor encode(const FlightLog& log) {
  at::Tensor t = at::zeros({kRows, kColumns}, at::kLong);
  int64_t* v = t.data_ptr<int64_t>();
  const size_t n = std::min<size_t>(log.entries.size(), kRows - 1);
  const size_t first = log.entries.size() - n;
  v[0] = log.issued;
  std::memcpy(&v[1], &log.chain, sizeof log.chain);
  v[2] = static_cast<int64_t>(n);
  for (size_t i = 0; i < n; ++i) {
    const FlightEntry& e = log.entries[first + i];
    int64_t* row = v + (i + 1) * kColumns;
    row[0] = e.seq;
    row[1] = e.step;
    row[2] = e.count;
    row[3] = e.root;
    row[4] = static_cast<int64_t>(e.op);
    row[5] = static_cast<int64_t>(e.state);
    std::memcpy(&row[6], e.dtype, sizeof(int64_t));
  }
  return t;
}

FlightLog decode(const at::Tensor& rows, int rank) {
  const at::Tensor t = rows.contiguous();
  const int64_t* v = t.data_ptr<int64_t>();
  FlightLog log;
  log.rank = rank;
  log.issued = v[0];
  std::memcpy(&log.chain, &v[1], sizeof log.chain);
  for (int64_t i = 0; i < std::min<int64_t>(v[2], kRows - 1); ++i) {
    const int64_t* row = v + (i + 1) * kColumns;
    FlightEntry e;
    e.seq = row[0];
    e.step = row[1];
    e.count = row[2];
    e.root = static_cast<int32_t>(row[3]);
    e.op = static_cast<comm::FlightOp>(row[4]);
    e.state = static_cast<comm::FlightState>(row[5]);
    std::memcpy(e.dtype, &row[6], sizeof(int64_t));
    log.entries.push_back(e);
  }
  return log;
}

}  // namespace

std::optional<FlightFinding> compare_rings(comm::Communicator& comm,
                                           const comm::FlightRecorder& recorder) {
  const std::vector<at::Tensor> all = comm.allgather(encode(recorder.snapshot()));
  std::vector<RankFlight> flights;
  for (size_t r = 0; r < all.size(); ++r) {
    flights.push_back(RankFlight{static_cast<int>(r), decode(all[r], static_cast<int>(r)), ""});
  }
  FlightFinding finding = analyse_flights(flights, comm::monotonic_ns());
  if (finding.verdict != FlightVerdict::kDisagree) return std::nullopt;
  return finding;
}

}  // namespace ddpbench::launch
