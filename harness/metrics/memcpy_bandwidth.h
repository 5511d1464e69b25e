// memcpy_bandwidth.h — this host's single-thread memcpy bandwidth: the yardstick `ddpbench comm`
// holds its bus bandwidths against (a CPU collective moves every byte through memory at least
// once per hop, so memcpy is what one core could do with no protocol at all).
#pragma once

#include <cstddef>

namespace ddpbench::metrics {

struct MemcpyBandwidth {
  size_t bytes = 0;     // bytes copied per repetition
  double seconds = 0;   // fastest repetition
  double gb_per_s = 0;  // bytes / seconds / 1e9 (bytes copied, not read + written)
};

// Copies `bytes` between two buffers whose pages were touched first, `repetitions` times, on
// the calling thread; keeps the fastest (the least disturbed by other processes).
MemcpyBandwidth measure_memcpy_bandwidth(size_t bytes, int repetitions = 5);

}  // namespace ddpbench::metrics
