// optimizer_bench.cpp — one SGD step over ResNet-18's 62 parameter tensors (cifar_resnet18's
// optimizer: momentum 0.9, nesterov, weight decay 1e-4): libtorch's per-tensor SGD against the
// multi-tensor SGD every mode uses (scenarios/optim/multi_tensor_sgd.h). On a GPU the
// multi-tensor step launches a handful of kernels instead of ~6 per tensor (issue 10); on the CPU
// _foreach falls back to a per-tensor loop, so the two should cost about the same there.
// Run: build/tests/ddpbench_bench --benchmark_filter=Sgd
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "scenarios/models/resnet.h"
#include "scenarios/optim/multi_tensor_sgd.h"

namespace ddpbench::scenarios {
namespace {

torch::optim::SGDOptions cifar_resnet18_sgd() {
  return torch::optim::SGDOptions(0.02).momentum(0.9).nesterov(true).weight_decay(1e-4);
}

// Arg 0: CPU, arg 1: cuda:0 (skipped with the reason where none is usable).
template <typename Optimizer>
void BM_SgdStep(benchmark::State& state) {
  const bool cuda = state.range(0) == 1;
  if (cuda && !torch::cuda::is_available()) {
    state.SkipWithError("no usable CUDA device in this process");
    return;
  }
  const at::Device device = cuda ? at::Device(at::kCUDA, 0) : at::Device(at::kCPU);
  models::ResNet model(models::resnet18_shape(), 10);
  model->to(device);
  std::vector<at::Tensor> params = model->parameters();
  for (auto& p : params) p.mutable_grad() = torch::randn_like(p);
  Optimizer optimizer(params, cifar_resnet18_sgd());
  optimizer.step();  // the momentum buffers exist from here on, as in steady-state training
  for (auto _ : state) {
    optimizer.step();
    if (cuda) torch::cuda::synchronize();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(params.size()));
}
BENCHMARK_TEMPLATE(BM_SgdStep, torch::optim::SGD)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_SgdStep, MultiTensorSGD)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ddpbench::scenarios
