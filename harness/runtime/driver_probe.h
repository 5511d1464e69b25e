// driver_probe.h — the CUDA driver's view of the machine (device names, driver and NCCL
// versions), from the CUDA runtime the project links (driver_probe_cuda.cpp) or, in builds
// without the CUDA toolkit, a stub (driver_probe_none.cpp). Internal to runtime/.
#pragma once

#include <string>
#include <vector>

namespace ddpbench::runtime {

struct DriverView {
  bool built_with_cuda = false;
  std::vector<std::string> device_names;
  std::string driver_version;
  std::string nccl_version;
  std::string status;  // why there is no device, when there is none
};

DriverView probe_driver();

}  // namespace ddpbench::runtime
