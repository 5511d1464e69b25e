// step_loop_bench.cpp — what the harness adds to a training step: single mode's step (the step
// loop, the single-device gradient path, the phase timer) against a bare libtorch loop written
// out by hand on the same model, initial weights, samples, loss and optimizer. Both load their
// batch with the same collate (data loading is part of a step in both). Issue 23's goal: single
// within 2% of bare. Run: build/tests/ddpbench_bench --benchmark_filter='Bare|SingleMode'
// (arguments: the scenario index in kScenarios, then the global batch).
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <memory>

#include "data/batch_plan.h"
#include "modes/common/step_loop.h"
#include "modes/single/single_path.h"
#include "runtime/execution_context.h"
#include "scenarios/registry.h"
#include "scenarios/training_recipe.h"

namespace ddpbench {
namespace {

constexpr const char* kScenarios[] = {"toy_cnn", "cifar_resnet18"};

// One scenario built once per benchmark run: spec, dataset and fresh model, and its plan.
struct Workload {
  explicit Workload(const benchmark::State& state)
      : registry(scenarios::builtin_registry()),
        spec(registry.get(kScenarios[state.range(0)])),
        instance(scenarios::instantiate(spec, {spec.seed, ""})),
        plan({instance.dataset->size(), 1, spec.shuffle, spec.seed, spec.sampler_drop_last},
             state.range(1)) {}

  scenarios::ScenarioRegistry registry;
  const scenarios::ScenarioSpec& spec;
  scenarios::ScenarioInstance instance;
  data::GlobalBatchPlan plan;
};

void BM_BareLibtorchStep(benchmark::State& state) {
  Workload w(state);
  torch::nn::AnyModule& model = w.instance.model;
  model.ptr()->train();
  auto optimizer = scenarios::make_optimizer(w.spec.optimizer, model.ptr()->parameters());
  data::PlanCursor cursor(w.plan);
  int64_t step = 0;
  for (auto _ : state) {
    data::StepPosition pos;
    const data::EpochPlan& epoch = cursor.seek(step++, pos);
    const data::Batch batch =
        data::collate(*w.instance.dataset, epoch.local_batch(pos.step_in_epoch, 0), pos.epoch);
    optimizer->zero_grad();
    const at::Tensor loss =
        scenarios::compute_loss(w.spec.loss, model.forward(batch.inputs), batch.targets);
    loss.backward();
    optimizer->step();
    benchmark::DoNotOptimize(loss.item<double>());  // the step loop reads the loss too
  }
  state.SetItemsProcessed(state.iterations() * state.range(1));
}

void BM_SingleModeStep(benchmark::State& state) {
  Workload w(state);
  const runtime::ExecutionContext context = runtime::ExecutionContext::cpu(at::kFloat);
  const std::unique_ptr<modes::GradientPath> path =
      modes::single::make_single_path(w.spec, w.instance, context);
  const modes::TrainInputs inputs{w.spec, *w.instance.dataset, w.plan, context};
  modes::TrainOptions options;
  options.checking = false;  // the perf phase's steps: timed, nothing recorded
  options.numerics = runtime::NumericsPhase::kPerf;
  modes::StepLoop loop(*path, inputs, options);
  int64_t step = 0;
  for (auto _ : state) loop.run_step(step++);
  state.SetItemsProcessed(state.iterations() * state.range(1));
}

// Alternating registration keeps the pair's measurements close together in time.
BENCHMARK(BM_BareLibtorchStep)->Args({0, 16})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SingleModeStep)->Args({0, 16})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BareLibtorchStep)->Args({1, 32})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SingleModeStep)->Args({1, 32})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ddpbench
