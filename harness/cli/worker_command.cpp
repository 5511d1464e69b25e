// worker_command.cpp — see worker_command.h.
#include "cli/worker_command.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <optional>

#include "cli/mode_runs.h"
#include "cli/output_dir.h"
#include "cli/run_outcome.h"
#include "cli/run_setup.h"
#include "dist/communicator_factory.h"
#include "dist/mpi_rendezvous.h"
#include "dist/store.h"
#include "errors.h"
#include "launch/worker_group.h"
#include "launch/worker_result_codec.h"

namespace ddpbench::cli {
namespace {

std::shared_ptr<dist::Store> join_store(const launch::WorldInfo& w,
                                        std::chrono::milliseconds timeout) {
  if (w.launcher == launch::Launcher::kOpenMpi && w.master_addr.empty()) {
    return dist::mpi_rendezvous_store(w.rank, timeout);
  }
  if (w.master_addr.empty() || w.master_port == 0) {
    throw InputError(fmt::format(
        "rank {} ({}): MASTER_ADDR and MASTER_PORT are needed for the rendezvous; export them "
        "(e.g. MASTER_ADDR=<rank 0 host> MASTER_PORT=29500)",
        w.rank, launch::launcher_name(w.launcher)));
  }
  // A ddpbench parent hosts the store; otherwise rank 0 does, as torchrun's c10d rendezvous.
  if (w.launcher != launch::Launcher::kDdpbench && w.rank == 0) {
    return dist::Store::serve(w.master_addr, w.master_port, timeout);
  }
  return dist::Store::connect(w.master_addr, w.master_port, timeout);
}

bool is_loopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

}  // namespace

int run_as_worker(const RunCommandOptions& o, const scenarios::ScenarioRegistry& registry,
                  const launch::WorldInfo& world, const std::vector<std::string>& argv) {
  const bool spawned = world.launcher == launch::Launcher::kDdpbench;
  RunSetup setup = resolve_run(o, registry, world.world_size);
  if (!setup.has_mode("ddp")) setup.modes.push_back("ddp");
  torch::set_num_threads(static_cast<int>(setup.threads));

  // Rank 0 of an external launch writes the report: prove --out usable before any training.
  std::optional<OutputDir> out;
  if (!spawned && world.rank == 0) out.emplace(o.out);

  // The MPI backend rendezvouses through mpirun itself; everything else through a store.
  std::shared_ptr<dist::Store> store;
  if (setup.backend != "mpi") store = join_store(world, setup.timeout);
  dist::CommunicatorRequest request;
  request.backend = setup.backend;
  request.rank = world.rank;
  request.world_size = world.world_size;
  request.store = store;
  request.interface_address = is_loopback(world.master_addr) ? "127.0.0.1" : "";
  // Longer than the launcher's progress timeout, so the parent names the hung rank first.
  request.timeout = setup.timeout + std::chrono::seconds(30);
  auto comm = dist::make_communicator(request);

  scenarios::ScenarioInstance instance = scenarios::instantiate(*setup.spec, setup.request);
  const data::GlobalBatchPlan plan =
      make_plan(setup, *instance.dataset, setup.world_size, setup.global_batch);
  const modes::GradRecordKind grad = resolve_grad_record(setup, *instance.model.ptr());
  const std::vector<std::string> names = parameter_names(*instance.model.ptr());

  modes::ddp::DdpWorkerOptions options;
  options.steps = setup.check_steps;
  options.warmup_steps = setup.warmup_steps;
  options.perf_steps = setup.perf_steps;
  options.dtype = setup.dtype;
  options.ddp = setup.ddp;
  options.fault = setup.fault;
  options.grad_record = grad;
  options.sync_bn = setup.sync_bn;
  if (spawned) {
    options.on_progress = [&store, rank = world.rank](int64_t step, modes::ddp::StepPhase phase) {
      store->set(launch::progress_key(rank),
                 fmt::format("{}:{}:{}", step, static_cast<int>(phase), step_phase_name(phase)));
    };
  }
  modes::ddp::DdpWorkerResult result =
      modes::ddp::run_ddp_worker(*setup.spec, instance, plan, *comm, options);

  if (world.rank != 0) return kExitOk;
  if (spawned) {
    store->set(launch::kResultKey, launch::encode_worker_result(result));
    return kExitOk;
  }
  std::vector<ModeOutcome> outcomes;
  if (setup.has_mode("single")) {
    scenarios::ScenarioInstance fresh = scenarios::instantiate(*setup.spec, setup.request);
    outcomes.push_back(run_single_mode(setup, fresh, plan, grad));
  }
  outcomes.push_back(ddp_outcome(setup, std::move(result), names));
  return finish_run(setup,
                    {instance.dataset->describe(), &plan, modes::grad_record_name(grad), argv},
                    std::move(outcomes), *out);
}

}  // namespace ddpbench::cli
