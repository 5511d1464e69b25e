// report_bench.cpp — rendering every report format of a large run: three modes of 1000 timed
// steps with losses, phases and 20 checks each, the sampler preview and the environment. A run
// ends with this, so it must stay far below a training step's cost. Items are reports rendered.
#include <benchmark/benchmark.h>

#include "reports/run/reporter.h"
#include "support/judged_checks.h"

namespace ddpbench::reports {
namespace {

RunReport large_report() {
  RunReport r;
  r.context.ddpbench_version = "bench";
  r.context.argv = {"ddpbench", "run", "--scenario", "cifar_resnet18", "--gpus", "8"};
  r.config.scenario = "cifar_resnet18";
  r.config.modes = {"single", "dp", "ddp"};
  r.config.steps = 1000;
  r.config.global_batch = 256;
  r.config.world_size = 8;
  r.config.sampler.dataset_size = 50000;
  r.config.sampler.num_replicas = 8;
  r.config.sampler.preview.assign(8, std::vector<int64_t>(64, 7));
  r.config.sampler.preview_padding.assign(8, std::vector<bool>(64, false));
  for (Mode mode : {Mode::kSingle, Mode::kDp, Mode::kDdp}) {
    ModeResult m;
    m.mode = mode;
    m.world_size = m.mode == Mode::kSingle ? 1 : 8;
    for (int s = 0; s < 1000; ++s) {
      m.losses.push_back(2.3 - 1e-3 * s);
      m.step_seconds.push_back(0.1 + 1e-5 * (s % 17));
    }
    if (m.mode != Mode::kSingle) {
      for (int c = 0; c < 20; ++c) {
        m.checks.push_back(test::judged_check(Stage::kGradients,
                                              c == 7 ? CheckStatus::kFail : CheckStatus::kPass));
        m.checks.back().tensor = "layer4.1.conv2.weight";
        m.checks.back().detail = "<normalized>";
      }
      m.reference.name = "exact reference: per-rank BatchNorm statistics";
    }
    m.throughput.timed_steps = 1000;
    m.throughput.samples_per_s = 2560;
    m.throughput.phases = {0.01, 0.03, 0.05, 0.005, 0.005};
    m.scaling_efficiency = 0.9;
    r.results.push_back(std::move(m));
  }
  return test::with_verdict(r);
}

void BM_RenderAllReports(benchmark::State& state) {
  const RunReport report = large_report();
  std::vector<std::unique_ptr<Reporter>> reporters = file_reporters();
  reporters.push_back(make_reporter("console"));
  int64_t bytes = 0;
  for (auto _ : state) {
    for (const auto& reporter : reporters) {
      const std::string text = reporter->render(report);
      bytes += static_cast<int64_t>(text.size());
      benchmark::DoNotOptimize(text.data());
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_RenderAllReports)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ddpbench::reports
