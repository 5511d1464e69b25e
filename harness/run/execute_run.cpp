// execute_run.cpp — see execute_run.h. This file is the launching parent's path.
#include "run/execute_run.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <cmath>

#include "comm/backend_support.h"
#include "errors.h"
#include "launch/environment.h"
#include "launch/worker_group.h"
#include "modes/sync_bn/sync_batch_norm.h"
#include "run/batch_export.h"
#include "run/bisect.h"
#include "run/exact_reference.h"
#include "run/finish_run.h"
#include "run/mode_phases.h"
#include "run/outcome_codec.h"
#include "run/output_dir.h"
#include "run/progress_line.h"
#include "run/rank_run.h"
#include "run/run_header.h"
#include "run/run_setup.h"
#include "scenarios/registry.h"

namespace ddpbench::run {
namespace {

using modes::ModeKind;

// The DDP ranks as child processes of this one; returns rank 0's outcome.
ModeOutcome spawn_ddp_ranks(const RunSetup& setup, const std::vector<std::string>& argv) {
  launch::WorkerGroupOptions group;
  group.world_size = static_cast<int>(setup.world_size);
  group.master_addr = setup.master_addr;
  group.progress_timeout = setup.timeout;
  group.argv = argv;
  ProgressLine progress(setup.progress, fmt::format("ddp x{}", setup.world_size),
                        setup.check_steps + setup.warmup_steps + setup.perf_steps);
  group.on_rank0_steps = [&progress](int64_t done) { progress.update(done, std::nan("")); };
  return decode_outcome(launch::run_worker_group(group));
}

}  // namespace

int execute_run(const RunRequest& request, const scenarios::ScenarioRegistry& registry,
                const std::vector<std::string>& argv, const CommandLineOf& command_line) {
  if (const auto world = launch::detect_world(launch::process_env())) {
    return run_as_rank(request, registry, *world, argv);
  }
  const RunSetup setup = resolve_run(request, registry, std::nullopt);
  const runtime::ExecutionContext context = runtime::configure_process(setup.context);
  if (setup.has_mode(ModeKind::kDdp)) {
    // This process launches the ranks, so it was not started by mpirun.
    comm::require_usable_backend(setup.backend,
                                 {context.gpus().usable_devices, /*under_mpirun=*/false});
  }
  if (setup.spec->unavailable_reason) {
    if (auto reason = setup.spec->unavailable_reason(setup.request)) {
      fmt::print(stderr, "ddpbench: skipped scenario {}: {}\n", setup.spec->name, *reason);
      return kExitOk;
    }
  }
  OutputDir out(setup.out);

  const std::shared_ptr<const data::Dataset> dataset = setup.spec->build_dataset(setup.request);
  scenarios::ScenarioInstance instance =
      scenarios::instantiate_model(*setup.spec, setup.request, dataset);
  const data::GlobalBatchPlan plan =
      make_plan(setup, *dataset, setup.world_size, setup.global_batch);
  const modes::GradRecordKind grad = resolve_grad_record(setup, *instance.model.ptr());
  if (setup.sync_bn && setup.has_mode(ModeKind::kDdp) &&
      modes::sync_bn::count_batchnorm(*instance.model.ptr()) == 0) {
    throw InputError(
        fmt::format("--sync-bn: scenario {} has no BatchNorm layer to convert", setup.spec->name));
  }
  if (setup.fault &&
      (setup.fault->kind == modes::FaultKind::kBuffers ||
       setup.fault->kind == modes::FaultKind::kDpBuffers) &&
      instance.model.ptr()->buffers().empty()) {
    throw InputError(fmt::format(
        "--inject-fault {}: scenario {} has no buffers to get wrong; use a BatchNorm scenario "
        "such as cifar_resnet18",
        modes::fault_name(setup.fault->kind), setup.spec->name));
  }
  print_run_header(setup, context, instance, plan, grad);

  if (setup.export_batches) {
    context.place_model(*instance.model.ptr());
    const std::vector<char> bytes =
        export_batches(setup, context, *dataset, plan, modes::capture_state(*instance.model.ptr()));
    out.stage("batches.pt", std::string_view(bytes.data(), bytes.size()));
  }

  const PhaseInputs in{setup, context, dataset, plan, grad};
  std::vector<ModeOutcome> outcomes;
  std::vector<ReferenceOutcome> references;
  if (setup.has_mode(ModeKind::kSingle)) {
    outcomes.push_back(run_local_mode(in, ModeKind::kSingle));
    references = run_exact_references(in, *instance.model.ptr());
  }
  if (setup.has_mode(ModeKind::kDataParallel)) {
    outcomes.push_back(run_local_mode(in, ModeKind::kDataParallel));
  }
  if (setup.has_mode(ModeKind::kDdp)) outcomes.push_back(spawn_ddp_ranks(setup, argv));
  RunDescription run{dataset->describe(), &plan, modes::grad_record_name(grad), argv,
                     instance.model.ptr().get()};
  if (setup.bisect) {
    run.bisect = [&](reports::RunReport& report) {
      int exit_code = 0;
      const reports::RunReport f64 =
          run_float64_twin(request, setup.lockstep, command_line, exit_code);
      annotate_bisect(report, f64, exit_code);
    };
  }
  return finish_run(setup, context, run, std::move(outcomes), references, out);
}

}  // namespace ddpbench::run
