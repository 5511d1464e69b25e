// driver_probe_cuda.cpp — driver_probe.h for builds with the CUDA toolkit + NCCL.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <fstream>
#include <regex>
#include <string>

#include "runtime/driver_probe.h"

namespace ddpbench::runtime {
namespace {

// The kernel module's version (e.g. 580.159.04), which the runtime API does not expose; Linux
// names it in /proc. "" where that file is absent (containers without it, other systems).
std::string kernel_module_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "";
  std::smatch m;
  if (std::regex_search(line, m, std::regex(R"(Kernel Module\s+([0-9][0-9.]*))"))) return m[1];
  return "";
}

}  // namespace

DriverView probe_driver() {
  DriverView view;
  view.built_with_cuda = true;
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess) {
    view.nccl_version = fmt::format("{}.{}.{}", nccl / 10000, (nccl % 10000) / 100, nccl % 100);
  }
  int driver = 0;
  // The module version names the driver; the CUDA version it supports says which runtimes it
  // can run.
  const std::string module = kernel_module_version();
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) {
    const std::string cuda = fmt::format("CUDA {}.{}", driver / 1000, (driver % 1000) / 10);
    view.driver_version = module.empty() ? cuda : fmt::format("{} ({})", module, cuda);
  }
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    view.status = fmt::format("no CUDA device ({})", cudaGetErrorString(err));
    return view;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    view.device_names.push_back(cudaGetDeviceProperties(&prop, d) == cudaSuccess
                                    ? std::string(prop.name)
                                    : fmt::format("CUDA device {}", d));
  }
  if (count == 0) view.status = "no CUDA device";
  return view;
}

}  // namespace ddpbench::runtime
