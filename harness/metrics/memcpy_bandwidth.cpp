// memcpy_bandwidth.cpp — see memcpy_bandwidth.h.
#include "metrics/memcpy_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <vector>

namespace ddpbench::metrics {

MemcpyBandwidth measure_memcpy_bandwidth(size_t bytes, int repetitions) {
  MemcpyBandwidth out;
  out.bytes = std::max<size_t>(bytes, 1);
  // Value-initialised: every page is touched before the first timed copy.
  std::vector<char> from(out.bytes, 1);
  std::vector<char> to(out.bytes, 0);
  std::memcpy(to.data(), from.data(), out.bytes);  // warm-up: caches, TLB
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < std::max(repetitions, 1); ++r) {
    from[static_cast<size_t>(r) % out.bytes] = static_cast<char>(r);  // not the same copy twice
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), out.bytes);
    const auto stop = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(stop - start).count());
  }
  // The copy must be observable, or the compiler may drop it.
  volatile char sink = to[out.bytes - 1];
  (void)sink;
  out.seconds = best;
  out.gb_per_s = best > 0 ? static_cast<double>(out.bytes) / best / 1e9 : 0;
  return out;
}

}  // namespace ddpbench::metrics
