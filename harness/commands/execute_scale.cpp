// execute_scale.cpp — see execute_scale.h.
#include "commands/execute_scale.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "comm/backend_support.h"
#include "errors.h"
#include "launch/child_process.h"
#include "metrics/step_statistics.h"
#include "modes/common/mode_kind.h"
#include "output/output_dir.h"
#include "output/report_file.h"
#include "output/scratch_dir.h"
#include "output/write_reports.h"
#include "reports/run/verdict.h"
#include "run/fit_checks.h"
#include "run/prepare_run.h"
#include "run/resolve_run.h"
#include "scenarios/registry.h"
#include "training/run_setup.h"

namespace ddpbench::commands {
namespace {

bool is_baseline(const reports::ModeResult& r) { return r.mode == reports::Mode::kSingle; }

// The points of the sweep as runs: perf only, single (the baseline) plus the timed modes, and the
// global batch that keeps the per-device batch fixed (weak) or the global batch fixed (strong).
std::vector<requests::RunRequest> plan_points(const requests::ScaleRequest& s,
                                              const scenarios::ScenarioSpec& spec, int64_t max_k) {
  const int64_t batch = s.base.batch_size > 0 ? s.base.batch_size : spec.global_batch;
  const int64_t per_device = std::max<int64_t>(1, batch / max_k);
  std::vector<requests::RunRequest> points;
  for (int64_t k : s.world_sizes) {
    requests::RunRequest p = s.base;
    p.world_size = k;
    p.batch_size = s.base.strong ? batch : per_device * k;
    p.perf_only = true;
    p.check_only = false;
    p.modes = {modes::mode_name(modes::ModeKind::kSingle)};
    p.modes.insert(p.modes.end(), s.modes.begin(), s.modes.end());
    points.push_back(std::move(p));
  }
  return points;
}

// Each world size and mode once: a repeated one would time the same point twice and write two
// results with one key, which the gate could only match to one of them.
template <typename T>
void require_distinct(const std::vector<T>& values, const char* flag) {
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (values[i] == values[j]) {
        throw InputError(fmt::format("scale {}: {} appears twice; list each once (e.g. 1,2,4,8)",
                                     flag, values[i]));
      }
    }
  }
}

}  // namespace

int execute_scale(const requests::ScaleRequest& request,
                  const scenarios::ScenarioRegistry& registry, const std::vector<std::string>& argv,
                  const requests::CommandLineOf& command_line) {
  const scenarios::ScenarioSpec spec =
      scenarios::configure_scenario(registry, run::scenario_source(request.base));
  require_distinct(request.world_sizes, "--gpus");
  require_distinct(request.modes, "--modes");
  const int64_t max_k = *std::max_element(request.world_sizes.begin(), request.world_sizes.end());
  std::vector<requests::RunRequest> points = plan_points(request, spec, max_k);
  // Refuse bad input for every point before the first one starts: what `run` itself refuses
  // before it trains. Every point trains the same scenario from the same seed: one model serves
  // every point's checks.
  std::optional<torch::nn::AnyModule> model;
  for (const requests::RunRequest& p : points) {
    const training::RunSetup setup = run::resolve_run(p, registry, std::nullopt);
    comm::require_usable_backend(setup.backend,
                                 {setup.context.gpus.usable_devices, /*under_mpirun=*/false});
    if (!model) model = setup.spec->build_model(setup.seed);
    run::check_model_fits(setup, *model->ptr());
  }
  output::OutputDir out(request.base.out, output::OutputPolicy::kOwnFolder, "scale");
  const output::ScratchDir scratch("scale");
  const std::string& tmp = scratch.path();

  reports::RunReport merged;
  bool have_baseline = false;
  for (requests::RunRequest& p : points) {
    p.out = fmt::format("{}/k{}", tmp, p.world_size);
    fmt::print("scale: K={} (global batch {}) ...\n", p.world_size, p.batch_size);
    std::fflush(stdout);
    const int code = launch::run_self(command_line(p), tmp);
    if (code != 0) {
      throw WorkerFailure(
          fmt::format("scale: the K={} point failed with exit code {}", p.world_size, code));
    }
    reports::RunReport point = output::read_report_file(p.out + "/report.json");
    // The sweep is described by its largest point (its global batch, sampler partition and
    // hosts), and by the command the user typed, not the internal per-point child command.
    if (p.world_size == max_k) {
      merged.context = point.context;
      merged.context.argv = argv;
      merged.config = point.config;
    }
    for (auto& r : point.results) {
      if (is_baseline(r)) {
        if (have_baseline) continue;  // weak scaling: every point's baseline is the same batch
        have_baseline = true;
      }
      r.state_file.clear();
      merged.results.push_back(std::move(r));
    }
  }
  // One baseline for the whole sweep: recompute every point's efficiency against it.
  double baseline = 0;
  for (const auto& r : merged.results) {
    if (is_baseline(r)) baseline = r.throughput.samples_per_s;
  }
  for (auto& r : merged.results) {
    if (!is_baseline(r)) {
      r.scaling_efficiency =
          metrics::scaling_efficiency(r.throughput.samples_per_s, r.world_size, baseline);
      r.throughput.weak_reasons = metrics::weak_reasons(
          r.throughput.timed_steps, r.throughput.step_time_cv, r.scaling_efficiency);
    }
  }
  merged.verdict = reports::run_verdict(merged);  // perf-only points: nothing judged
  output::write_reports(merged, out);
  return kExitOk;
}

}  // namespace ddpbench::commands
