// execution_context.cpp — see execution_context.h.
#include "runtime/execution_context.h"

#include <ATen/ATen.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/nn/module.h>
#include <torch/utils.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "runtime/cuda_services.h"

namespace ddpbench::runtime {

ExecutionContext::ExecutionContext(at::ScalarType dtype, int64_t threads, Numerics numerics,
                                   GpuInfo gpus, at::Device device)
    : dtype_(dtype),
      threads_(threads),
      numerics_(numerics),
      gpus_(std::move(gpus)),
      device_(device) {}

ExecutionContext ExecutionContext::cpu(at::ScalarType dtype) {
  return ExecutionContext(dtype, at::get_num_threads(), Numerics{}, GpuInfo{}, at::kCPU);
}

const char* ExecutionContext::dtype_name() const {
  return dtype_ == at::kDouble ? "float64" : "float32";
}

at::Device ExecutionContext::replica_device(int64_t replica) const {
  if (!device_.is_cuda()) return device_;
  return {at::kCUDA, static_cast<c10::DeviceIndex>(replica % gpus_.usable_devices)};
}

void ExecutionContext::place_model(torch::nn::Module& module) const {
  place_model(module, device_);
}

void ExecutionContext::place_model(torch::nn::Module& module, at::Device device) const {
  torch::NoGradGuard no_grad;
  for (auto& p : module.parameters()) {
    if (p.is_floating_point() && p.scalar_type() != dtype_) p.set_data(p.to(dtype_));
    if (p.device() != device) p.set_data(p.to(device));
  }
  for (auto& b : module.buffers()) {
    if (b.is_floating_point() && b.scalar_type() != dtype_) b.set_data(b.to(dtype_));
    if (b.device() != device) b.set_data(b.to(device));
  }
}

data::Batch ExecutionContext::place_batch(data::Batch batch) const {
  return place_batch(std::move(batch), device_);
}

namespace {

// A host tensor in `dtype` on `device`: through pinned memory and a non-blocking copy to a CUDA
// device (pageable memory would make the copy synchronous), directly on the CPU. The pinned
// block stays alive until the copy is done: the caching host allocator records the copy's
// stream and reuses the block only after it. A batch already on a device (--data-on-device)
// goes directly: only host memory can be pinned.
at::Tensor to_device(const at::Tensor& host, at::Device device, at::ScalarType dtype) {
  if (!device.is_cuda() || !host.is_cpu()) return host.to(device, dtype);
  return host.to(dtype).pin_memory().to(device, dtype, /*non_blocking=*/true);
}

}  // namespace

data::Batch ExecutionContext::place_batch(data::Batch batch, at::Device device) const {
  // Token ids (text) stay int64, as class labels do: an embedding indexes with them.
  batch.inputs = to_device(batch.inputs, device,
                           batch.inputs.is_floating_point() ? dtype_ : batch.inputs.scalar_type());
  batch.targets =
      to_device(batch.targets, device,
                batch.targets.is_floating_point() ? dtype_ : batch.targets.scalar_type());
  return batch;
}

std::vector<at::Device> ExecutionContext::devices_in_use(int64_t replicas) const {
  if (!device_.is_cuda()) return {device_};
  std::vector<at::Device> devices;
  const int64_t distinct = std::min<int64_t>(std::max<int64_t>(replicas, 1), gpus_.usable_devices);
  for (int64_t r = 0; r < distinct; ++r)
    devices.push_back(replicas > 1 ? replica_device(r) : device_);
  return devices;
}

void ExecutionContext::reset_peak_memory(int64_t replicas) const {
  if (!device_.is_cuda()) return;
  for (const at::Device d : devices_in_use(replicas)) reset_peak_device_memory(d);
}

std::vector<int64_t> ExecutionContext::peak_memory_bytes(int64_t replicas) const {
  std::vector<int64_t> peaks;
  if (!device_.is_cuda()) return peaks;
  for (const at::Device d : devices_in_use(replicas)) peaks.push_back(peak_device_memory_bytes(d));
  return peaks;
}

std::unique_ptr<PhaseTimer> ExecutionContext::make_phase_timer() const {
  return device_.is_cuda() ? make_cuda_phase_timer(device_) : make_host_phase_timer();
}

void ExecutionContext::enter_phase(NumericsPhase phase) const {
  if (!device_.is_cuda()) return;
  const bool check = phase == NumericsPhase::kCheck;
  at::globalContext().setDeterministicCuDNN(check);
  at::globalContext().setBenchmarkCuDNN(!check);
  at::globalContext().setDeterministicAlgorithms(check, /*warn_only=*/false);
}

ExecutionContext configure_process(const ContextRequest& request) {
  if (request.threads > 0) at::set_num_threads(static_cast<int>(request.threads));
  const GpuInfo& gpus = request.gpus;
  at::Device device = at::kCPU;
  if (request.device == DeviceKind::kCuda) {
    if (gpus.usable_devices == 0) {
      throw std::logic_error("configure_process: CUDA requested without a usable device (" +
                             gpus.status + ")");
    }
    device = at::Device(at::kCUDA,
                        static_cast<c10::DeviceIndex>(request.device_slot % gpus.usable_devices));
    // Deterministic cuBLAS needs a fixed workspace, chosen before the first cuBLAS call (the
    // value PyTorch's reproducibility notes give). A user's own setting is kept.
    setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
    c10::impl::getDeviceGuardImpl(at::kCUDA)->setDevice(device);
    at::globalContext().setAllowTF32CuBLAS(request.numerics.allow_tf32);
    at::globalContext().setAllowTF32CuDNN(request.numerics.allow_tf32);
  }
  ExecutionContext context(request.dtype, at::get_num_threads(), request.numerics, gpus, device);
  context.enter_phase(NumericsPhase::kCheck);
  return context;
}

}  // namespace ddpbench::runtime
