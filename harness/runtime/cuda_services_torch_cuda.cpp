// cuda_services_torch_cuda.cpp — cuda_services.h for a CUDA libtorch (PyPI torch 2.x).
#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "runtime/cuda_services.h"

namespace ddpbench::runtime {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    throw std::runtime_error(
        fmt::format("CUDA phase timer: {} failed: {}", what, cudaGetErrorString(e)));
  }
}

// Each stretch is a (start, end) event pair on the device's current stream; the pairs are read
// at finish_step(), after the last one completed. Events are reused across steps.
class CudaPhaseTimer : public PhaseTimer {
 public:
  explicit CudaPhaseTimer(at::Device device) : device_(device) {}

  ~CudaPhaseTimer() override {
    c10::cuda::CUDAGuard guard(device_);
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }

  void resume() override { start_ = record(); }

  void stop(Phase phase) override {
    const size_t end = record();
    stretches_.push_back({start_, end, phase});
    start_ = end;  // a stop() directly after a stop() times the stretch in between
  }

  metrics::PhaseTimes finish_step() override {
    metrics::PhaseTimes t;
    if (!stretches_.empty()) {
      c10::cuda::CUDAGuard guard(device_);
      check(cudaEventSynchronize(events_[stretches_.back().end]), "cudaEventSynchronize");
      for (const Stretch& s : stretches_) {
        float ms = 0;
        check(cudaEventElapsedTime(&ms, events_[s.start], events_[s.end]), "cudaEventElapsedTime");
        const double seconds = ms / 1000.0;
        phase_slot(t, s.phase) += seconds;
        t.total += seconds;
      }
    }
    stretches_.clear();
    used_ = 0;
    return t;
  }

 private:
  struct Stretch {
    size_t start;
    size_t end;
    Phase phase;
  };

  size_t record() {
    c10::cuda::CUDAGuard guard(device_);
    if (used_ == events_.size()) {
      cudaEvent_t e = nullptr;
      check(cudaEventCreate(&e), "cudaEventCreate");
      events_.push_back(e);
    }
    check(
        cudaEventRecord(events_[used_], c10::cuda::getCurrentCUDAStream(device_.index()).stream()),
        "cudaEventRecord");
    return used_++;
  }

  at::Device device_;
  std::vector<cudaEvent_t> events_;
  size_t used_ = 0;
  size_t start_ = 0;
  std::vector<Stretch> stretches_;
};

}  // namespace

bool built_with_torch_cuda() { return true; }

std::unique_ptr<PhaseTimer> make_cuda_phase_timer(at::Device device) {
  return std::make_unique<CudaPhaseTimer>(device);
}

// The caching allocator sizes its per-device tables on its first allocation; until then it
// refuses every device index ("Invalid device argument", measured on the H200 with torch 2.11: a
// TorchScript model's run asked before any CUDA tensor existed in the process). One empty
// allocation initialises it; the block returns to the cache at once.
void init_caching_allocator(at::Device device) {
  (void)at::empty({1}, at::TensorOptions().device(device).dtype(at::kFloat));
}

void reset_peak_device_memory(at::Device device) {
  if (!device.is_cuda()) return;
  init_caching_allocator(device);
  c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
}

int64_t peak_device_memory_bytes(at::Device device) {
  if (!device.is_cuda()) return -1;
  init_caching_allocator(device);
  // Index 0 is the aggregate over the small and large pools in every release.
  return c10::cuda::CUDACachingAllocator::getDeviceStats(device.index()).allocated_bytes[0].peak;
}

void synchronize_device(at::Device device) {
  c10::cuda::CUDAGuard guard(device);
  const cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    throw std::runtime_error(
        fmt::format("cudaDeviceSynchronize on {} failed: {}", device.str(), cudaGetErrorString(e)));
  }
}

}  // namespace ddpbench::runtime
