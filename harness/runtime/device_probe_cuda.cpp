// device_probe_cuda.cpp — device_probe.h for builds with CUDA + NCCL (compiled and linked in CI,
// exercised at run time only where a GPU exists).
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include "runtime/device_probe.h"

namespace ddpbench::runtime {

GpuInfo probe_gpus() {
  GpuInfo info;
  info.built_with_cuda = true;
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess) {
    info.nccl_version = fmt::format("{}.{}.{}", nccl / 10000, (nccl % 10000) / 100, nccl % 100);
  }
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    info.status = fmt::format("no CUDA device ({})", cudaGetErrorString(err));
    return info;
  }
  info.device_count = count;
  info.status = count > 0 ? fmt::format("{} CUDA device(s)", count) : "no CUDA device";
  return info;
}

}  // namespace ddpbench::runtime
