// bucket_bench.cpp — what DDP's gradient buckets cost per step, on ResNet-18's 62 parameter
// shapes (44.7 MB) in 25 MiB buckets: flatten (copy every gradient into its bucket slot) and
// unflatten (copy the averaged slots back), the two copies a reducer without bucket views pays,
// against checking attached views (what modes/ddp/reducer.cpp does each step: .grad IS the
// slot). Flatten and unflatten count bytes, the view check counts parameters.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include "modes/ddp/bucket_assignment.h"
#include "scenarios/models/resnet.h"

namespace ddpbench::modes::ddp {
namespace {

struct Buckets {
  std::vector<at::Tensor> grads;
  std::vector<at::Tensor> slots;  // one view per gradient into its bucket's flat buffer
  std::vector<at::Tensor> flat;
  int64_t bytes = 0;
};

Buckets resnet18_buckets() {
  Buckets b;
  scenarios::models::ResNet net(scenarios::models::resnet18_shape(), 10);
  std::vector<int64_t> sizes;
  for (const auto& p : net->parameters()) {
    b.grads.push_back(at::randn_like(p));
    sizes.push_back(p.numel() * p.element_size());
    b.bytes += sizes.back();
  }
  // The buckets the reducer rebuilds after the first step, for a backward that produces
  // gradients in reverse registration order.
  std::vector<int64_t> ready;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) ready.push_back(i);
  const std::vector<std::vector<int64_t>> buckets = rebuilt_buckets(ready, sizes, BucketLimits{});
  for (const auto& bucket : buckets) {
    int64_t numel = 0;
    for (int64_t i : bucket) numel += b.grads[static_cast<size_t>(i)].numel();
    b.flat.push_back(at::empty({numel}));
  }
  b.slots.resize(b.grads.size());
  size_t k = 0;
  for (const auto& bucket : buckets) {
    int64_t offset = 0;
    for (int64_t i : bucket) {
      const at::Tensor& g = b.grads[static_cast<size_t>(i)];
      b.slots[static_cast<size_t>(i)] = b.flat[k].narrow(0, offset, g.numel()).view(g.sizes());
      offset += g.numel();
    }
    ++k;
  }
  return b;
}

void BM_BucketFlatten(benchmark::State& state) {
  at::set_num_threads(1);
  Buckets b = resnet18_buckets();
  for (auto _ : state) {
    for (size_t i = 0; i < b.grads.size(); ++i) b.slots[i].copy_(b.grads[i]);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * b.bytes);
}
BENCHMARK(BM_BucketFlatten)->Unit(benchmark::kMillisecond);

void BM_BucketUnflatten(benchmark::State& state) {
  at::set_num_threads(1);
  Buckets b = resnet18_buckets();
  for (auto _ : state) {
    for (size_t i = 0; i < b.grads.size(); ++i) b.grads[i].copy_(b.slots[i]);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * b.bytes);
}
BENCHMARK(BM_BucketUnflatten)->Unit(benchmark::kMillisecond);

// The per-step cost of bucket views: checking that every .grad still is its slot.
void BM_BucketViewCheck(benchmark::State& state) {
  Buckets b = resnet18_buckets();
  std::vector<at::Tensor> grads = b.slots;
  for (auto _ : state) {
    int64_t attached = 0;
    for (size_t i = 0; i < grads.size(); ++i) {
      attached += grads[i].is_alias_of(b.slots[i]) && grads[i].data_ptr() == b.slots[i].data_ptr();
    }
    benchmark::DoNotOptimize(attached);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(grads.size()));
}
BENCHMARK(BM_BucketViewCheck)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ddpbench::modes::ddp
