// cuda_services.h — the few things that need libtorch's CUDA headers (c10/cuda): CUDA-event phase
// timing, the caching allocator's peak-memory counters, and the current stream for collectives
// to order themselves against. Built from cuda_services_torch_cuda.cpp when the linked libtorch is
// a CUDA build, from cuda_services_none.cpp otherwise — where no CUDA device is ever usable, so
// those stubs are unreachable and say so if reached.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>

#include "runtime/phase_timer.h"

namespace ddpbench::runtime {

// Whether this build's libtorch can run CUDA code at all (a compile-time fact of the build).
bool built_with_torch_cuda();

// Times phases with CUDA events on `device`'s current stream: stop() records an event and
// returns at once; finish_step() waits for the step's last event (the step boundary, the only
// place the host synchronises) and reads the elapsed times.
std::unique_ptr<PhaseTimer> make_cuda_phase_timer(at::Device device);

// The caching allocator's high-water mark of allocated bytes on `device` since the last reset.
void reset_peak_device_memory(at::Device device);
int64_t peak_device_memory_bytes(at::Device device);

// Blocks until all work queued on `device` is done (step boundaries of untimed phases, tests).
void synchronize_device(at::Device device);

}  // namespace ddpbench::runtime
