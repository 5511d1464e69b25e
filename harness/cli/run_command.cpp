// run_command.cpp — see run_command.h. This file is the launching parent's path; the worker's
// path is worker_command.cpp. Order matters for "nothing half-written": every input is validated
// and --out is proven writable before any training, and files are committed together at the end.
#include "cli/run_command.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <thread>

#include "cli/batch_export.h"
#include "cli/mode_runs.h"
#include "cli/output_dir.h"
#include "cli/run_context.h"
#include "cli/run_outcome.h"
#include "cli/run_setup.h"
#include "cli/validators.h"
#include "cli/worker_command.h"
#include "dist/gpu_probe.h"
#include "errors.h"
#include "launch/environment.h"
#include "launch/worker_group.h"
#include "launch/worker_result_codec.h"
#include "metrics/progress_line.h"
#include "modes/sync_bn/sync_batch_norm.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::cli {
namespace {

void check_backend_here(const RunSetup& s, const dist::GpuInfo& gpu) {
  if (!s.has_mode("ddp")) return;
  if (s.backend == "mpi") {
    throw InputError(
        "--backend mpi needs ranks started by mpirun (e.g. mpirun -np 4 ddpbench run --backend "
        "mpi ...); use --backend gloo to let ddpbench spawn the workers itself");
  }
  if (s.backend == "nccl" && gpu.device_count == 0) {
    throw InputError(
        fmt::format("--backend nccl needs a CUDA device: {}; use --backend gloo", gpu.status));
  }
  if (s.backend != "gloo" && s.backend != "nccl") {
    throw InputError(
        fmt::format("unknown --backend '{}': known backends are gloo, mpi, nccl", s.backend));
  }
}

void print_header(const RunSetup& s, const scenarios::ScenarioInstance& instance,
                  const data::GlobalBatchPlan& plan, const dist::GpuInfo& gpu,
                  modes::GradRecordKind grad) {
  const scenarios::ScenarioSpec& spec = *s.spec;
  const auto& sampler = plan.sampler();
  fmt::print("{} — run {}\n", version_line(), spec.name);
  fmt::print("scenario  {}: {}, {}\n", spec.name, spec.model_name, scenarios::loss_name(spec.loss));
  fmt::print("data      {}; shuffle={} seed={}\n", instance.dataset->describe(), spec.shuffle,
             s.seed);
  fmt::print(
      "plan      global batch {} = {} rank(s) x {}, {} steps/epoch; per epoch {} sample(s) "
      "duplicated by padding, {} dropped\n",
      s.global_batch, s.world_size, plan.local_batch(), plan.steps_per_epoch(),
      sampler.padded_count(), sampler.dropped_count());
  fmt::print("modes     {}; {}, {} thread(s) per process, gradients compared {}\n",
             fmt::join(s.modes, ","), s.dtype_name, s.threads, modes::grad_record_name(grad));
  fmt::print("phases    check {} step(s); perf {} warm-up + {} timed step(s), {} scaling\n",
             s.check_steps, s.warmup_steps, s.perf_steps, s.strong_scaling ? "strong" : "weak");
  if (s.has_mode("dp") && gpu.device_count == 0) {
    fmt::print("dp        no CUDA device: {} replicas run as {} threads of this process\n",
               s.world_size, s.world_size);
  }
  if (s.has_mode("ddp") && s.sync_bn)
    fmt::print("syncbn    BatchNorm layers synchronised under DDP\n");
  if (s.has_mode("ddp") && gpu.device_count == 0) {
    const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
    fmt::print("devices   {}: running {} CPU rank(s) over {}{}\n", gpu.status, s.world_size,
               s.backend,
               s.world_size > cores
                   ? fmt::format(" — {} ranks on {} cores: throughput figures are oversubscribed",
                                 s.world_size, cores)
                   : "");
  }
  std::fflush(stdout);
}

}  // namespace

CLI::App* add_run_command(CLI::App& app, RunCommandOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("run", "Train a scenario in the selected modes and compare them");
  cmd->add_option("--scenario", o.scenario, "Scenario name (see `ddpbench list`)");
  cmd->add_option("--modes", o.modes, "Comma-separated modes: single, dp, ddp")->delimiter(',');
  cmd->add_option("--steps", o.steps, "Training steps (default: the scenario's)")
      ->check(integer_at_least(1));
  cmd->add_option("--batch-size", o.batch_size, "Global batch size (default: the scenario's)")
      ->check(integer_at_least(1));
  cmd->add_option("--seed", o.seed, "Seed for init, shuffle and augmentation")
      ->check(integer_at_least(0));
  cmd->add_option("--dtype", o.dtype, "float32 or float64")
      ->check(CLI::IsMember({"float32", "float64"}));
  cmd->add_option("--data-dir", o.data_dir, "Dataset directory (default: the scenario's data)");
  cmd->add_option("--out", o.out, "Output directory for report.json and state files");
  cmd->add_option("--threads", o.threads, "Intra-op threads per process (default: cores / ranks)")
      ->check(integer_at_least(1));
  cmd->add_option("--gpus,--world-size", o.gpus, "World size K: ranks, one process each")
      ->check(integer_at_least(1));
  cmd->add_option("--backend", o.backend, "Collectives: gloo, mpi (under mpirun), nccl")
      ->check(CLI::IsMember({"gloo", "mpi", "nccl"}));
  cmd->add_option("--master-addr", o.master_addr, "Address the workers rendezvous on");
  cmd->add_option("--timeout", o.timeout,
                  "Seconds without progress before a rank is declared hung");
  cmd->add_option("--ddp-impl", o.ddp_impl, "bucketed (overlapping) or naive")
      ->check(CLI::IsMember({"bucketed", "naive"}));
  cmd->add_option("--bucket-cap-mb", o.bucket_cap_mb, "DDP bucket cap in MiB");
  cmd->add_option("--first-bucket-mb", o.first_bucket_mb, "DDP first bucket size in MiB");
  cmd->add_flag("--no-broadcast-buffers", o.no_broadcast_buffers,
                "Do not broadcast rank 0's buffers before each forward");
  cmd->add_flag("--find-unused-parameters", o.find_unused_parameters,
                "Reduce parameters without a gradient as zeros");
  cmd->add_option("--comm-hook", o.comm_hook, "DDP communication hook: allreduce, fp16, bf16")
      ->check(CLI::IsMember({"allreduce", "fp16", "bf16"}));
  cmd->add_option("--inject-fault", o.inject_fault,
                  "KIND:rank=R,step=S[,eps=E][,tensor=NAME], KIND in grad, crash, hang, nan");
  cmd->add_option("--grad-check", o.grad_check, "Gradient comparison: auto, full, fingerprint")
      ->check(CLI::IsMember({"auto", "full", "fingerprint"}));
  cmd->add_flag("--sync-bn", o.sync_bn, "Convert BatchNorm to SyncBN under DDP");
  cmd->add_flag("--quiet", o.quiet, "No progress line on a terminal");
  cmd->add_option("--warmup", o.warmup, "Perf phase: warm-up steps discarded before timing")
      ->check(integer_at_least(0));
  cmd->add_flag("--check-only", o.check_only, "Only the correctness checks, no perf phase");
  cmd->add_flag("--perf-only", o.perf_only, "Only the perf phase, no correctness checks");
  cmd->add_flag("--strong", o.strong, "Strong scaling: single-device baseline at the global batch");
  cmd->add_flag("--export-batches", o.export_batches,
                "Also write batches.pt for reference/torch_ddp_oracle.py");
  return cmd;
}

int run_run_command(const RunCommandOptions& o, const scenarios::ScenarioRegistry& registry,
                    const std::vector<std::string>& argv) {
  if (const auto world = launch::detect_world(launch::process_env())) {
    return run_as_worker(o, registry, *world, argv);
  }
  const RunSetup setup = resolve_run(o, registry, std::nullopt);
  const dist::GpuInfo gpu = dist::probe_gpus();
  check_backend_here(setup, gpu);
  if (setup.spec->unavailable_reason) {
    if (auto reason = setup.spec->unavailable_reason(setup.request)) {
      fmt::print(stderr, "ddpbench: skipped scenario {}: {}\n", setup.spec->name, *reason);
      return kExitOk;
    }
  }
  OutputDir out(o.out);
  torch::set_num_threads(static_cast<int>(setup.threads));

  scenarios::ScenarioInstance instance = scenarios::instantiate(*setup.spec, setup.request);
  const data::GlobalBatchPlan plan =
      make_plan(setup, *instance.dataset, setup.world_size, setup.global_batch);
  const modes::GradRecordKind grad = resolve_grad_record(setup, *instance.model.ptr());
  if (setup.sync_bn && setup.has_mode("ddp") &&
      modes::sync_bn::count_batchnorm(*instance.model.ptr()) == 0) {
    throw InputError(
        fmt::format("--sync-bn: scenario {} has no BatchNorm layer to convert", setup.spec->name));
  }
  print_header(setup, instance, plan, gpu, grad);

  if (o.export_batches) {
    modes::cast_floating_point(*instance.model.ptr(), setup.dtype);
    const std::vector<char> bytes =
        export_batches(setup, *instance.dataset, plan, modes::capture_state(*instance.model.ptr()));
    out.stage("batches.pt", std::string_view(bytes.data(), bytes.size()));
  }

  std::vector<ModeOutcome> outcomes;
  const std::vector<std::string> names = parameter_names(*instance.model.ptr());
  // Every mode starts from a freshly built model: same seed, same initial weights.
  if (setup.has_mode("single")) outcomes.push_back(run_single_mode(setup, instance, plan, grad));
  if (setup.has_mode("dp")) {
    scenarios::ScenarioInstance fresh = scenarios::instantiate(*setup.spec, setup.request);
    outcomes.push_back(run_dp_mode(setup, fresh, plan, grad));
  }
  if (setup.has_mode("ddp")) {
    launch::WorkerGroupOptions group;
    group.world_size = static_cast<int>(setup.world_size);
    group.master_addr = o.master_addr;
    group.progress_timeout = setup.timeout;
    group.argv = argv;
    metrics::ProgressLine progress(setup.progress, fmt::format("ddp x{}", setup.world_size),
                                   setup.check_steps + setup.warmup_steps + setup.perf_steps);
    group.on_rank0_steps = [&progress](int64_t done) { progress.update(done, std::nan("")); };
    const std::string bytes = launch::run_worker_group(group);
    outcomes.push_back(ddp_outcome(setup, launch::decode_worker_result(bytes), names));
  }
  return finish_run(setup,
                    {instance.dataset->describe(), &plan, modes::grad_record_name(grad), argv},
                    std::move(outcomes), out);
}

}  // namespace ddpbench::cli
