// runner_load.cpp — see runner_load.h.
#include "launch/runner_load.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace ddpbench::launch {
namespace {

// The first line of /proc/stat: cpu user nice system idle iowait irq softirq steal ...
LoadMeter::CpuTimes read_cpu_times() {
  LoadMeter::CpuTimes t;
  std::ifstream in("/proc/stat");
  std::string label;
  uint64_t v[8] = {};
  if (!(in >> label) || label != "cpu") return t;
  for (uint64_t& x : v) in >> x;
  for (uint64_t x : v) t.total += x;
  t.idle = v[3];
  t.iowait = v[4];
  t.steal = v[7];
  return t;
}

double own_cpu_seconds() {
  double s = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    getrusage(who, &u);
    s += static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  }
  return s;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0;
  in >> one;
  return one;
}

double mean_cpu_mhz() {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  double sum = 0;
  unsigned read = 0;
  for (unsigned c = 0; c < cpus; ++c) {
    std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(c) +
                     "/cpufreq/scaling_cur_freq");
    double khz = 0;
    if (in >> khz) {
      sum += khz / 1000;
      ++read;
    }
  }
  return read > 0 ? sum / read : 0;
}

}  // namespace

LoadMeter::LoadMeter()
    : start_(read_cpu_times()),
      own_cpu_s_(own_cpu_seconds()),
      started_(std::chrono::steady_clock::now()) {}

RunnerLoad LoadMeter::finish() const {
  RunnerLoad r;
  const CpuTimes end = read_cpu_times();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double ticks = static_cast<double>(end.total - start_.total);
  if (ticks > 0) {
    const double tick_s = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
    const double cpus = std::max(1u, std::thread::hardware_concurrency());
    const double busy_s = (ticks - static_cast<double>(end.idle - start_.idle) -
                           static_cast<double>(end.iowait - start_.iowait) -
                           static_cast<double>(end.steal - start_.steal)) *
                          tick_s;
    const double ours_s = own_cpu_seconds() - own_cpu_s_;
    if (r.wall_s > 0) {
      r.others_cpu_share = std::clamp((busy_s - ours_s) / (r.wall_s * cpus), 0.0, 1.0);
    }
    r.steal_share = static_cast<double>(end.steal - start_.steal) / ticks;
    r.iowait_share = static_cast<double>(end.iowait - start_.iowait) / ticks;
  }
  r.load_average_1m = load_average();
  r.cpu_mhz = mean_cpu_mhz();
  return r;
}

}  // namespace ddpbench::launch
