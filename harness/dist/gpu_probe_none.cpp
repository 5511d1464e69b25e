// gpu_probe_none.cpp — gpu_probe.h for builds without CUDA/NCCL.
#include "dist/gpu_probe.h"

namespace ddpbench::dist {

GpuInfo probe_gpus() {
  GpuInfo info;
  info.status = "built without CUDA/NCCL";
  return info;
}

}  // namespace ddpbench::dist
