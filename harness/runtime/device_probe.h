// device_probe.h — what the machine offers in devices, and whether this build's libtorch can use
// them. Two questions with separate answers: the CUDA driver may see GPUs that a CPU-only libtorch
// (Debian's 1.13) cannot use. Only `usable_devices` counts for training; everything else is what
// the report's environment block says. Never throws: any CUDA error reads as "no GPU", said once.
#pragma once

#include <string>
#include <vector>

namespace ddpbench::runtime {

struct GpuInfo {
  bool built_with_cuda = false;  // the CUDA toolkit + NCCL were compiled in (device_probe_cuda)
  bool torch_has_cuda = false;   // the linked libtorch is a CUDA build
  int usable_devices = 0;        // CUDA devices libtorch can train on (0 without either)
  std::vector<std::string> device_names;  // per visible device, as the driver names it
  std::string driver_version;             // e.g. "580.159.04"; "" without a driver
  std::string cuda_runtime_version;       // libtorch's CUDA runtime, e.g. "13.0"
  std::string cudnn_version;              // libtorch's cuDNN, e.g. "9.19.0"
  std::string nccl_version;               // "" when built without NCCL
  std::string status;                     // one line for run headers and report contexts
};

GpuInfo probe_gpus();

// "NVIDIA H100 80GB HBM3 x1", or "" when no device is visible.
std::string describe_devices(const GpuInfo& info);

}  // namespace ddpbench::runtime
