// execution_context.cpp — see execution_context.h.
#include "runtime/execution_context.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>
#include <torch/utils.h>

namespace ddpbench::runtime {

ExecutionContext::ExecutionContext(at::ScalarType dtype, int64_t threads, Numerics numerics,
                                   GpuInfo gpus)
    : dtype_(dtype), threads_(threads), numerics_(numerics), gpus_(std::move(gpus)) {}

ExecutionContext ExecutionContext::cpu(at::ScalarType dtype) {
  return ExecutionContext(dtype, at::get_num_threads(), Numerics{}, GpuInfo{});
}

const char* ExecutionContext::dtype_name() const {
  return dtype_ == at::kDouble ? "float64" : "float32";
}

at::Device ExecutionContext::replica_device(int64_t /*replica*/) const { return device_; }

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
  batch.inputs = batch.inputs.to(device_, dtype_);
  batch.targets = batch.targets.is_floating_point() ? batch.targets.to(device_, dtype_)
                                                    : batch.targets.to(device_);
  return batch;
}

std::unique_ptr<PhaseTimer> ExecutionContext::make_phase_timer() const {
  return make_host_phase_timer();
}

ExecutionContext configure_process(const ContextRequest& request) {
  if (request.threads > 0) at::set_num_threads(static_cast<int>(request.threads));
  at::globalContext().setDeterministicAlgorithms(request.numerics.deterministic_algorithms,
                                                 /*warn_only=*/false);
  return ExecutionContext(request.dtype, at::get_num_threads(), request.numerics, probe_gpus());
}

}  // namespace ddpbench::runtime
