// collective_counts.h — how many collectives of each kind a rank issued, and their bytes: what the
// recording communicator (comm/recording_communicator.h) counts of every collective it passes to
// the backend, over the world's communicator and every group split off it together, so that a
// mode's accounting (training/collective_accounting.h) can say what each step put on the wire.
// --debug-collectives' fingerprint all-gathers are not counted; a collective a fault skipped is
// not.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "comm/flight_recorder.h"

namespace ddpbench::comm {

inline constexpr size_t kCollectiveKinds = 5;  // FlightOp's values

struct CollectiveCounts {
  std::array<int64_t, kCollectiveKinds> count{};
  std::array<int64_t, kCollectiveKinds> bytes{};  // this rank's input elements x element size

  int64_t of(FlightOp op) const { return count[static_cast<size_t>(op)]; }
  int64_t bytes_of(FlightOp op) const { return bytes[static_cast<size_t>(op)]; }
  void add(FlightOp op, int64_t n_bytes) {
    ++count[static_cast<size_t>(op)];
    bytes[static_cast<size_t>(op)] += n_bytes;
  }
  CollectiveCounts& operator+=(const CollectiveCounts& o) {
    for (size_t i = 0; i < kCollectiveKinds; ++i) {
      count[i] += o.count[i];
      bytes[i] += o.bytes[i];
    }
    return *this;
  }
  CollectiveCounts operator-(const CollectiveCounts& o) const {
    CollectiveCounts d = *this;
    for (size_t i = 0; i < kCollectiveKinds; ++i) {
      d.count[i] -= o.count[i];
      d.bytes[i] -= o.bytes[i];
    }
    return d;
  }
};

}  // namespace ddpbench::comm
