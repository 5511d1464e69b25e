// stopwatch.h — lap timing for step phases on the steady clock.
#pragma once

#include <chrono>

namespace ddpbench::metrics {

class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()), lap_(start_) {}
  // Seconds since the previous lap (or construction); starts the next lap.
  double lap() {
    const auto now = Clock::now();
    const double s = std::chrono::duration<double>(now - lap_).count();
    lap_ = now;
    return s;
  }
  // Seconds since construction.
  double total() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  Clock::time_point lap_;
};

}  // namespace ddpbench::metrics
