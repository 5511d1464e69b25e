// device_probe_none.cpp — device_probe.h for builds without CUDA/NCCL.
#include "runtime/device_probe.h"

namespace ddpbench::runtime {

GpuInfo probe_gpus() {
  GpuInfo info;
  info.status = "built without CUDA/NCCL";
  return info;
}

}  // namespace ddpbench::runtime
