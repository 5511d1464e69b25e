// data_bench.cpp — Google Benchmark micro-benchmarks of the data path that every training step
// pays for: the sampler's epoch order, one sample's synthetic generation + augmentation, and a
// full 256-sample CIFAR batch. Run: build/tests/ddpbench_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include "data/batch_plan.h"
#include "data/image_dataset.h"
#include "data/synthetic_cifar.h"
#include "scenarios/cifar_data.h"

namespace ddpbench::data {
namespace {

void BM_SamplerEpochOrder(benchmark::State& state) {
  DistributedSampler s({state.range(0), 8, true, 0, false});
  for (auto _ : state) benchmark::DoNotOptimize(s.epoch_order());
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_SamplerEpochOrder)->Arg(50000)->Arg(1281167);

void BM_SyntheticSampleWithAugmentation(benchmark::State& state) {
  ImageDataset ds(std::make_shared<SyntheticCifar>(50000, 0), scenarios::cifar_train_transform(0));
  int64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(ds.get(i++ % 50000, 0));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SyntheticSampleWithAugmentation);

void BM_CollateCifarBatch(benchmark::State& state) {
  ImageDataset ds(std::make_shared<SyntheticCifar>(50000, 0), scenarios::cifar_train_transform(0));
  const GlobalBatchPlan plan({50000, 1, true, 0, false}, state.range(0));
  const EpochPlan epoch = plan.epoch(0);
  int64_t step = 0;
  for (auto _ : state) benchmark::DoNotOptimize(collate(ds, epoch.global_batch(step++ % 10), 0));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CollateCifarBatch)->Arg(256);

}  // namespace
}  // namespace ddpbench::data

BENCHMARK_MAIN();
