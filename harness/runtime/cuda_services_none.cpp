// cuda_services_none.cpp — cuda_services.h for a CPU libtorch: no CUDA device is usable, so
// nothing here should be reached; reaching it is a bug, said as one.
#include <stdexcept>

#include "runtime/cuda_services.h"

namespace ddpbench::runtime {
namespace {

[[noreturn]] void unreachable(const char* what) {
  throw std::logic_error(std::string(what) + " called in a build whose libtorch has no CUDA");
}

}  // namespace

bool built_with_torch_cuda() { return false; }

std::unique_ptr<PhaseTimer> make_cuda_phase_timer(at::Device /*device*/) {
  unreachable("make_cuda_phase_timer");
}

void reset_peak_device_memory(at::Device /*device*/) {}

int64_t peak_device_memory_bytes(at::Device /*device*/) { return -1; }

void synchronize_device(at::Device /*device*/) { unreachable("synchronize_device"); }

}  // namespace ddpbench::runtime
