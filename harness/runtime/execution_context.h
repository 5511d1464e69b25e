// execution_context.h — the execution context of one process: where it trains (device), in which
// dtype, with how many intra-op threads and which numerics switches. Built once per process
// (configure_process) and handed to every mode in place of a loose dtype. It owns the placement
// points — putting a model and a batch into the run's dtype and onto the device — and picks the
// phase timer, and switches the numerics between the check phase (deterministic) and the perf
// phase (fastest kernels) on CUDA. On the CPU those switches are no-ops: its kernels are already
// deterministic and have no autotuning.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "runtime/device_probe.h"
#include "runtime/phase_timer.h"

namespace torch::nn {
class Module;
}

namespace ddpbench::runtime {

// Switches that change what kernels compute; part of a run's configuration.
struct Numerics {
  // TensorFloat-32 in CUDA matmuls and convolutions (no effect on the CPU). Off by default, so
  // a float32 check sees float32 arithmetic; the tolerance model then holds as on the CPU.
  bool allow_tf32 = false;
};

enum class DeviceKind { kCpu, kCuda };

struct ContextRequest {
  at::ScalarType dtype = at::kFloat;  // kFloat or kDouble
  int64_t threads = 0;                // intra-op threads; 0 leaves libtorch's choice alone
  Numerics numerics;
  DeviceKind device = DeviceKind::kCpu;
  // Which device this process trains on: cuda:(slot mod device count). The local rank for a DDP
  // rank (torchrun's LOCAL_RANK -> cuda:LOCAL_RANK), 0 for the single-process modes.
  int device_slot = 0;
  // The probe `device` was chosen from (probe_gpus(), taken once per process while the run's
  // flags are resolved); configure_process places the process by it instead of probing again.
  GpuInfo gpus;
};

// Which phase the process is in: on CUDA the check phase runs deterministic kernels (cuDNN
// deterministic, no autotuning, at::globalContext().setDeterministicAlgorithms) so that two runs
// of one configuration compute the same bits; the perf phase lets cuDNN autotune
// (cudnn.benchmark), as a tuned training job would.
enum class NumericsPhase { kCheck, kPerf };

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
  bool on_cuda() const { return device_.is_cuda(); }
  // Where DataParallel replica `replica` runs: cuda:(replica mod device count) on CUDA (the
  // launcher refused more replicas than devices unless --share-gpus), the CPU otherwise.
  at::Device replica_device(int64_t replica) const;

  // Casts floating-point parameters and buffers to dtype() and moves them to `device` (default:
  // device()). Integer buffers such as BatchNorm's num_batches_tracked stay int64, as with
  // Python's module.to(dtype); libtorch's Module::to(dtype) would convert them too and the state
  // would no longer match PyTorch's state_dict.
  void place_model(torch::nn::Module& module) const;
  void place_model(torch::nn::Module& module, at::Device device) const;
  // Casts floating-point inputs and targets (regression) to dtype() and moves both to `device`
  // (default: device()); integer inputs (token ids) and class labels stay int64. To a CUDA device
  // the host batch is staged in pinned memory and copied non-blocking, so the copy overlaps the
  // host's next work.
  data::Batch place_batch(data::Batch batch) const;
  data::Batch place_batch(data::Batch batch, at::Device device) const;

  // Host clock on the CPU; CUDA events on the current stream on CUDA (runtime/cuda_services.h).
  std::unique_ptr<PhaseTimer> make_phase_timer() const;

  // Switches the process-wide numerics for `phase` (see NumericsPhase); nothing on the CPU.
  void enter_phase(NumericsPhase phase) const;

  // The devices a mode with `replicas` DataParallel replicas trains on (1 for single and a DDP
  // rank): device() alone, or each distinct replica_device(r) once.
  std::vector<at::Device> devices_in_use(int64_t replicas) const;
  // The CUDA caching allocator's high-water mark of allocated bytes on each of
  // devices_in_use(replicas) since reset_peak_memory(replicas): what a user reads from
  // torch.cuda.max_memory_allocated(). Empty on the CPU, where no allocator tracks a peak.
  void reset_peak_memory(int64_t replicas) const;
  std::vector<int64_t> peak_memory_bytes(int64_t replicas) const;

 private:
  ExecutionContext(at::ScalarType dtype, int64_t threads, Numerics numerics, GpuInfo gpus,
                   at::Device device);

  at::ScalarType dtype_;
  int64_t threads_;
  Numerics numerics_;
  GpuInfo gpus_;
  at::Device device_{at::kCPU};

  friend ExecutionContext configure_process(const ContextRequest& request);
};

// Applies the request to this process (intra-op threads, numerics switches, the current CUDA
// device) and returns the context, in the check phase. Call once per process, before any
// training. A request for CUDA without a usable device in `request.gpus` is a logic error: the
// run's device choice (run/device_choice.h) refuses it as bad input first.
ExecutionContext configure_process(const ContextRequest& request);

}  // namespace ddpbench::runtime
