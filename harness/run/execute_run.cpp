// execute_run.cpp — see execute_run.h. This file is the launching parent's path.
#include "run/execute_run.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <cmath>

#include "errors.h"
#include "launch/environment.h"
#include "launch/runner_load.h"
#include "launch/worker_group.h"
#include "output/output_dir.h"
#include "run/bisect.h"
#include "run/default_comparison.h"
#include "run/finish_run.h"
#include "run/perf_repeats.h"
#include "run/prepare_run.h"
#include "run/rank_run.h"
#include "run/run_header.h"
#include "runtime/device_probe.h"
#include "scenarios/registry.h"
#include "training/batch_export.h"
#include "training/mode_phases.h"
#include "training/outcome_codec.h"
#include "training/progress_line.h"
#include "training/reference_runs.h"

namespace ddpbench::run {
namespace {

using modes::ModeKind;

// The ranks of a per-rank mode (ddp, zero) as child processes of this one, one group per mode;
// returns rank 0's outcome.
training::ModeOutcome spawn_ranks(const training::RunSetup& setup, ModeKind mode,
                                  const std::vector<std::string>& argv,
                                  launch::RankZygote* zygote) {
  launch::WorkerGroupOptions group;
  group.zygote = zygote;
  group.world_size = static_cast<int>(setup.world_size);
  group.master_addr = setup.master_addr;
  group.progress_timeout = setup.timeout;
  group.argv = argv;
  group.extra_env.push_back(fmt::format("{}={}", launch::kRankModeEnv, modes::mode_name(mode)));
  if (mode == ModeKind::kDdp && setup.ddp.impl == modes::ddp::DdpImpl::kC10d) {
    group.unrecorded_collectives =
        "c10d's Reducer issues its collectives on its process group, which the flight recorder "
        "does not see";
  }
  training::ProgressLine progress(setup.progress,
                                  fmt::format("{} x{}", modes::mode_name(mode), setup.world_size),
                                  setup.check_steps + setup.warmup_steps + setup.perf_steps);
  group.on_rank0_steps = [&progress](int64_t done) { progress.update(done, std::nan("")); };
  return training::decode_outcome(launch::run_worker_group(group));
}

// Runs one mode with the machine's load measured around it (Note [A slowdown the load explains]):
// repeat 1's runner_load; the perf-only repeats measure their own the same way.
template <typename RunMode>
training::ModeOutcome with_runner_load(RunMode&& run_mode) {
  const launch::LoadMeter meter;
  training::ModeOutcome o = run_mode();
  const launch::RunnerLoad l = meter.finish();
  o.runner_load = {l.wall_s,       l.others_cpu_share, l.steal_share,
                   l.iowait_share, l.load_average_1m,  l.cpu_mhz};
  return o;
}

}  // namespace

int execute_run(const requests::RunRequest& given, const scenarios::ScenarioRegistry& registry,
                const std::vector<std::string>& argv, const requests::CommandLineOf& command_line,
                launch::RankZygote* zygote) {
  if (const auto world = launch::detect_world(launch::process_env())) {
    // A rank this process's parent spawned resolves the modes the parent did (its argv is the
    // parent's); its world size comes from the launch, so no device count is needed.
    const bool spawned = world->launcher == launch::Launcher::kDdpbench;
    return run_as_rank(spawned ? with_default_comparison(given, 0) : given, registry, *world, argv);
  }
  // Per Note [Default comparison]; also what the --bisect twin re-runs (its command line names
  // both).
  const requests::RunRequest request =
      with_default_comparison(given, runtime::probe_gpus().usable_devices);
  std::optional<PreparedRun> prepared = prepare_run(request, registry, std::nullopt);
  if (!prepared) return kExitOk;  // the scenario cannot run here; prepare_run said why
  const training::RunSetup& setup = prepared->setup;
  const runtime::ExecutionContext& context = prepared->context;
  const std::shared_ptr<const data::Dataset>& dataset = prepared->dataset;
  scenarios::ScenarioInstance& instance = prepared->instance;
  const data::GlobalBatchPlan& plan = prepared->plan;
  const modes::GradRecordKind grad = prepared->grad;
  output::OutputDir out(setup.out);
  print_run_header(setup, context, instance, plan, grad);

  if (setup.export_batches) {
    context.place_model(*instance.model.ptr());
    const std::vector<char> bytes = training::export_batches(
        setup, context, *dataset, plan, modes::capture_state(*instance.model.ptr()));
    out.stage("batches.pt", std::string_view(bytes.data(), bytes.size()));
  }

  const training::PhaseInputs in{setup, context, dataset, plan, grad, prepared->on_device.get()};
  std::vector<training::ModeOutcome> outcomes;
  std::vector<training::ReferenceOutcome> references;
  if (setup.has_mode(ModeKind::kSingle)) {
    outcomes.push_back(
        with_runner_load([&] { return training::run_local_mode(in, ModeKind::kSingle); }));
    references = training::run_exact_references(in, *instance.model.ptr());
  }
  if (setup.has_mode(ModeKind::kDp)) {
    outcomes.push_back(
        with_runner_load([&] { return training::run_local_mode(in, ModeKind::kDp); }));
  }
  for (ModeKind mode : modes::per_rank_modes(setup.modes)) {
    try {
      outcomes.push_back(with_runner_load([&] { return spawn_ranks(setup, mode, argv, zygote); }));
    } catch (const launch::GroupFailure& failure) {
      // The folder says this run failed and why, with the ranks' last collectives (Note [The
      // flight recorder]), instead of keeping an earlier run's report that says it passed.
      out.discard_staged();
      out.stage("failure.json", failure.failure_json());
      out.commit();
      throw;
    }
  }
  if (setup.repeats > 1) {
    // The repeats' command line names modes and ranks, as the bisect twin's does: the steps this
    // run resolved go by name.
    requests::RunRequest resolved = request;
    resolved.steps = setup.steps;
    run_perf_repeats(resolved, setup.repeats, command_line, outcomes);
  }
  RunDescription run{dataset->describe(),        &plan, modes::grad_record_name(grad), argv,
                     instance.model.ptr().get(), &in};
  if (setup.bisect) {
    run.bisect = [&](reports::RunReport& report) {
      int exit_code = 0;
      // The twin's command line names modes and ranks: it is no bare run, so it gets the
      // steps this run resolved (a bare run's cap included) by name.
      requests::RunRequest resolved = request;
      resolved.steps = setup.steps;
      const reports::RunReport f64 =
          run_float64_twin(resolved, setup.lockstep, command_line, exit_code);
      annotate_bisect(report, f64, exit_code);
    };
  }
  return finish_run(setup, context, run, std::move(outcomes), references, out);
}

}  // namespace ddpbench::run
