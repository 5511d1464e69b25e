// runner_load.h — what the machine did besides us while a child process ran: the CPU share that
// other processes took, steal and iowait (from /proc/stat), the load average and the CPU clock
// at the end. `ab` records it per round and side, so that a slowdown that the runner's load
// explains is told apart from one the build caused (Note [A slowdown the load explains],
// stats/load_rule.h). Linux only; what cannot be read is 0.
#pragma once

#include <chrono>
#include <cstdint>

namespace ddpbench::launch {

struct RunnerLoad {
  double wall_s = 0;
  // Busy CPU time of the whole machine that was not ours or our waited-for children's, as a
  // share of all CPUs over the wall time (1 = every CPU busy with others' work throughout).
  double others_cpu_share = 0;
  double steal_share = 0;   // of all CPU time: taken by the hypervisor for other guests
  double iowait_share = 0;  // of all CPU time: idle waiting for I/O
  double load_average_1m = 0;
  double cpu_mhz = 0;  // the mean of the CPUs' scaling_cur_freq; 0 where not readable
};

// Starts measuring at construction; finish() after the child has been reaped (its CPU time is
// counted as ours only once waited for).
class LoadMeter {
 public:
  LoadMeter();
  RunnerLoad finish() const;

  struct CpuTimes {
    uint64_t total = 0, idle = 0, iowait = 0, steal = 0;  // clock ticks, all CPUs
  };

 private:
  CpuTimes start_;
  double own_cpu_s_ = 0;  // ours and our reaped children's, at the start
  std::chrono::steady_clock::time_point started_;
};

}  // namespace ddpbench::launch
