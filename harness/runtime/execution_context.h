// execution_context.h — the execution context of one process: where it trains (device), in which
// dtype, with how many intra-op threads and which numerics switches. Built once per process
// (configure_process) and handed to every mode in place of a loose dtype. It owns the placement
// points — putting a model and a batch into the run's dtype and onto the device — and picks the
// phase timer. The CPU is its only device so far: adding CUDA touches this file, the timer, the
// placement points and the communicators, not the modes.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <memory>
#include <string>

#include "data/dataset.h"
#include "runtime/device_probe.h"
#include "runtime/phase_timer.h"

namespace torch::nn {
class Module;
}

namespace ddpbench::runtime {

// Switches that change what kernels compute; part of a run's configuration.
struct Numerics {
  // TensorFloat-32 in CUDA matmuls and convolutions (no effect on the CPU). Off, so a float32
  // check sees float32 arithmetic.
  bool allow_tf32 = false;
  // at::globalContext().setDeterministicAlgorithms. Off: the CPU kernels ddpbench runs are
  // deterministic already, and the switch would refuse some that are not needed to be.
  bool deterministic_algorithms = false;
};

struct ContextRequest {
  at::ScalarType dtype = at::kFloat;  // kFloat or kDouble
  int64_t threads = 0;                // intra-op threads; 0 leaves libtorch's choice alone
  Numerics numerics;
};

class ExecutionContext {
 public:
  // A CPU context that changes no process-wide setting (unit tests, tools).
  static ExecutionContext cpu(at::ScalarType dtype);

  at::ScalarType dtype() const { return dtype_; }
  // "float32" or "float64", as --dtype spells it.
  const char* dtype_name() const;
  int64_t threads() const { return threads_; }
  const Numerics& numerics() const { return numerics_; }
  const GpuInfo& gpus() const { return gpus_; }
  // Where this process trains: single-device mode, one DDP rank.
  at::Device device() const { return device_; }
  // Where DataParallel replica `replica` runs.
  at::Device replica_device(int64_t replica) const;

  // Casts floating-point parameters and buffers to dtype() and moves them to `device` (default:
  // device()). Integer buffers such as BatchNorm's num_batches_tracked stay int64, as with
  // Python's module.to(dtype); libtorch's Module::to(dtype) would convert them too and the state
  // would no longer match PyTorch's state_dict.
  void place_model(torch::nn::Module& module) const;
  void place_model(torch::nn::Module& module, at::Device device) const;
  // Casts the inputs, and floating-point targets (regression), to dtype() and moves both to
  // device(); class labels stay int64.
  data::Batch place_batch(data::Batch batch) const;

  std::unique_ptr<PhaseTimer> make_phase_timer() const;

 private:
  ExecutionContext(at::ScalarType dtype, int64_t threads, Numerics numerics, GpuInfo gpus);

  at::ScalarType dtype_;
  int64_t threads_;
  Numerics numerics_;
  GpuInfo gpus_;
  at::Device device_{at::kCPU};

  friend ExecutionContext configure_process(const ContextRequest& request);
};

// Probes the devices, applies the request to this process (intra-op threads, numerics switches)
// and returns the context. Call once per process, before any training.
ExecutionContext configure_process(const ContextRequest& request);

}  // namespace ddpbench::runtime
