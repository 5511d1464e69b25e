// prepare_run.cpp — see prepare_run.h.
#include "run/prepare_run.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "comm/backend_support.h"
#include "comm/mpi_communicator.h"
#include "errors.h"
#include "run/first_sample_probe.h"
#include "run/fit_checks.h"
#include "run/resolve_run.h"
#include "run/resume.h"
#include "training/mode_phases.h"

namespace ddpbench::run {
namespace {

using modes::ModeKind;

// Under an external launcher the world size is the launcher's; a --gpus that says otherwise is
// a mistake, not a preference.
void check_world_size(const requests::RunRequest& request, const launch::WorldInfo& world) {
  if (request.world_size_given && request.world_size != world.world_size) {
    throw InputError(fmt::format(
        "--gpus {} contradicts the launcher's world of {} ranks ({}): under an external "
        "launcher the world size comes from it; drop --gpus or start {} ranks",
        request.world_size, world.world_size, launch::launcher_name(world.launcher),
        request.world_size));
  }
}

}  // namespace

std::optional<PreparedRun> prepare_run(const requests::RunRequest& request,
                                       const scenarios::ScenarioRegistry& registry,
                                       const std::optional<launch::WorldInfo>& world) {
  if (world) check_world_size(request, *world);
  training::RunSetup setup = resolve_run(
      request, registry, world ? std::optional<int64_t>(world->world_size) : std::nullopt);
  if (world) {
    // A rank is a DDP rank unless --modes names zero; rank 0 of an external launch also runs
    // single.
    if (!setup.has_per_rank_mode()) setup.modes.push_back(ModeKind::kDdp);
    // Rank r trains on cuda:(LOCAL_RANK mod device count), torchrun's convention.
    setup.context.device_slot = world->local_rank;
  }
  runtime::ExecutionContext context = runtime::configure_process(setup.context);
  if (world && context.on_cuda() && !setup.share_gpus &&
      world->local_rank >= context.gpus().usable_devices) {
    throw InputError(fmt::format(
        "rank {} has local rank {} and this node {} CUDA device(s): add --share-gpus to place "
        "several ranks on one device (with --backend gloo or mpi), or start fewer ranks per node",
        world->rank, world->local_rank, context.gpus().usable_devices));
  }
  if (setup.has_per_rank_mode()) {
    // The launching parent spawns the ranks itself, so it was not started by mpirun.
    comm::require_usable_backend(
        setup.backend, {context.gpus().usable_devices, world.has_value() && comm::mpi_launched()});
  }
  if (setup.spec->unavailable_reason) {
    if (auto reason = setup.spec->unavailable_reason(setup.request)) {
      if (!world || world->rank == 0) {
        fmt::print(stderr, "ddpbench: skipped scenario {}: {}\n", setup.spec->name, *reason);
      }
      return std::nullopt;
    }
  }

  std::shared_ptr<const data::Dataset> dataset = setup.spec->build_dataset(setup.request);
  scenarios::ScenarioInstance instance =
      scenarios::instantiate_model(*setup.spec, setup.request, dataset);
  data::GlobalBatchPlan plan =
      training::make_plan(setup, *dataset, setup.world_size, setup.global_batch);
  const modes::GradRecordKind grad = training::resolve_grad_record(setup, *instance.model.ptr());
  check_model_fits(setup, *instance.model.ptr());
  check_micro_batches(setup, plan);
  if (!setup.spec->model_file.empty() || !setup.spec->data_file.empty() ||
      setup.spec->synthetic.requested()) {
    size_evaluation_by_output(request, check_first_sample(setup, *dataset, instance.model), setup);
    check_training_step(setup, *dataset, instance.model, smallest_training_batch(setup, plan));
  }
  if (!request.resume.empty()) {
    setup.resume = load_resume(request.resume, setup, registry, *instance.model.ptr(), plan);
  }
  check_evaluation(request, setup);
  setup.in_join =
      plan.joins_within(std::max(setup.check_steps, setup.warmup_steps + setup.perf_steps));
  check_join_fits(setup, *instance.model.ptr(), plan);
  std::shared_ptr<data::SharedDeviceData> on_device =
      setup.data_on_device
          ? std::make_shared<data::SharedDeviceData>(dataset, context.device())
          : nullptr;
  return PreparedRun{std::move(setup), std::move(context), std::move(dataset), std::move(instance),
                     std::move(plan),  grad,               std::move(on_device)};
}

}  // namespace ddpbench::run
