// device_probe.h — what the machine offers in devices. Built against CUDA + NCCL when they are
// found (so that path compiles and links in CI), against a stub otherwise. Any CUDA error counts
// as "no GPU": ddpbench then says so once and runs on the CPU; it never claims GPU work.
#pragma once

#include <string>

namespace ddpbench::runtime {

struct GpuInfo {
  bool built_with_cuda = false;
  int device_count = 0;      // 0 when no usable device
  std::string nccl_version;  // "" when built without NCCL
  std::string status;        // one line for run headers and report contexts
};

GpuInfo probe_gpus();

}  // namespace ddpbench::runtime
