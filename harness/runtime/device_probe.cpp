// device_probe.cpp — see device_probe.h: what libtorch says about CUDA (any libtorch, CUDA or
// not, answers these); the driver's view comes from device_probe_cuda.cpp or its stub.
#include "runtime/device_probe.h"

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include "runtime/cuda_services.h"
#include "runtime/driver_probe.h"

namespace ddpbench::runtime {
namespace {

// cuDNN as libtorch reports it: major*10000 + minor*100 + patch in 8.x and 9.x
// (major*1000 + minor*100 + patch before 8).
std::string cudnn_version_string(long v) {
  if (v <= 0) return "";
  if (v >= 10000) return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
}

}  // namespace

GpuInfo probe_gpus() {
  GpuInfo info;
  const DriverView driver = probe_driver();
  info.built_with_cuda = driver.built_with_cuda;
  info.device_names = driver.device_names;
  info.driver_version = driver.driver_version;
  info.nccl_version = driver.nccl_version;
  info.torch_has_cuda = at::hasCUDA();
  if (info.torch_has_cuda) {
    info.usable_devices = static_cast<int>(torch::cuda::device_count());
    const long rt = at::detail::getCUDAHooks().versionCUDART();
    if (rt > 0) info.cuda_runtime_version = fmt::format("{}.{}", rt / 1000, (rt % 1000) / 10);
    info.cudnn_version = cudnn_version_string(at::detail::getCUDAHooks().versionCuDNN());
  }
  const auto visible = static_cast<int>(info.device_names.size());
  if (info.usable_devices > 0) {
    info.status = fmt::format("{} usable CUDA device(s)", info.usable_devices);
  } else if (visible > 0) {
    info.status = fmt::format(
        "{} CUDA device(s) visible, but this libtorch is a CPU build (build against a CUDA "
        "PyTorch: ci/build.sh --torch python)",
        visible);
  } else if (!built_with_torch_cuda()) {
    // The build decides first: with a CPU libtorch no driver would help, and the driver's words
    // ("CUDA driver version is insufficient") sent users looking for a driver upgrade.
    info.status = fmt::format("this libtorch is a CPU build (the driver: {})", driver.status);
  } else {
    info.status = driver.status;
  }
  return info;
}

std::string describe_devices(const GpuInfo& info) {
  if (info.device_names.empty()) return "";
  // Nodes are usually uniform; a mixed node lists each model.
  std::string out;
  size_t i = 0;
  while (i < info.device_names.size()) {
    size_t j = i;
    while (j < info.device_names.size() && info.device_names[j] == info.device_names[i]) ++j;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} x{}", info.device_names[i], j - i);
    i = j;
  }
  return out;
}

}  // namespace ddpbench::runtime
