// run_header.cpp — see run_header.h.
#include "run/run_header.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "data/device_data.h"
#include "run/version_line.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::run {

namespace {

// The plan line: the global batch over the ranks, steps per epoch, padding and dropped samples.
void print_plan(const training::RunSetup& s, const data::GlobalBatchPlan& plan) {
  const auto& sampler = plan.sampler();
  // A batch larger than an epoch's share: every step holds what there is, not the batch asked for.
  const std::string short_steps =
      plan.local_batch() > sampler.num_samples()
          ? fmt::format(" (more than an epoch holds: each step has {} samples, {} per rank)",
                        sampler.total_size(), sampler.num_samples())
          : "";
  // Uneven rank batches (7,7,6): the ranks with fewer batches join for the epoch's last steps.
  std::string per_rank = std::to_string(plan.local_batch());
  std::string joins;
  if (plan.uneven()) {
    per_rank = fmt::format("{}", fmt::join(plan.local_batches(), ","));
    std::vector<std::string> counts;
    for (int64_t r = 0; r < s.world_size; ++r) {
      counts.push_back(std::to_string(plan.rank_steps_per_epoch(r)));
    }
    joins = fmt::format(" (batches per rank {}: a rank out of batches joins, PyTorch's Join)",
                        fmt::join(counts, ","));
  }
  fmt::print(
      "plan      global batch {} = {} rank(s) x {}{}, {} steps/epoch{}; per epoch {} sample(s) "
      "duplicated by padding, {} dropped (drop_last={})\n",
      s.global_batch, s.world_size, per_rank, short_steps, plan.steps_per_epoch(), joins,
      sampler.padded_count(), sampler.dropped_count(), sampler.options().drop_last);
}

// Where the modes run: the device, and how dp's replicas and ddp's ranks are placed on it.
void print_device(const training::RunSetup& s, const runtime::ExecutionContext& context) {
  using modes::ModeKind;
  const runtime::GpuInfo& gpu = context.gpus();
  if (context.on_cuda()) {
    const int n = gpu.usable_devices;
    fmt::print(
        "device    cuda: {}; TF32 {}; check phase deterministic kernels, perf phase "
        "cudnn.benchmark\n",
        runtime::describe_devices(gpu), context.numerics().allow_tf32 ? "on" : "off");
    if (s.has_mode(ModeKind::kDp)) {
      fmt::print("dp        {} replicas on cuda:0..{}{}\n", s.world_size,
                 std::min<int64_t>(s.world_size, n) - 1,
                 s.world_size > n ? " (shared: --share-gpus)" : "");
    }
    if (s.has_mode(ModeKind::kDdp)) {
      fmt::print("ddp       rank r on cuda:(local rank mod {}) over {}{}\n", n,
                 comm::backend_name(s.backend), s.world_size > n ? " (shared: --share-gpus)" : "");
    }
  } else {
    fmt::print("device    cpu ({})\n", gpu.status);
  }
  if (s.has_mode(ModeKind::kDp) && !context.on_cuda()) {
    fmt::print("dp        on the CPU: {} replicas run as {} threads of this process\n",
               s.world_size, s.world_size);
  }
}

// A line per option that changes how the modes train: accumulation, the engine, zero's stage,
// SyncBN, CPU ranks.
void print_mode_options(const training::RunSetup& s, const runtime::ExecutionContext& context) {
  using modes::ModeKind;
  if (s.accumulation_steps > 1) {
    fmt::print(
        "accum     dp, ddp and zero: {} micro-steps of {} samples per optimizer step{}; single: "
        "the "
        "whole batch of {} in one pass\n",
        s.accumulation_steps, s.global_batch / s.accumulation_steps,
        s.no_sync ? " (ddp: no_sync on all but the last)"
                  : " (ddp: no_sync OFF, every one allreduces)",
        s.global_batch);
  }
  if (s.has_mode(ModeKind::kDdp) && s.ddp.impl == modes::ddp::DdpImpl::kC10d) {
    fmt::print(
        "engine    ddp: PyTorch's own c10d Reducer of libtorch {}, driven as "
        "DistributedDataParallel drives it{}\n",
        TORCH_VERSION, s.ddp.static_graph ? " (static graph)" : "");
  }
  if (s.has_replicas()) {
    fmt::print(
        "zero      HSDP, ZeRO stage {}: mesh ({} replicas, {}-way shard) over {} ranks ({}): "
        "{}gradients and optimizer state sharded within each group of {}, averaged across the "
        "replicas (FSDP2's divide factors)\n",
        s.zero_stage, s.world_size / s.shard_group, s.shard_group, s.world_size,
        comm::backend_name(s.backend), s.zero_stage == 3 ? "parameters, " : "", s.shard_group);
  } else if (s.has_mode(ModeKind::kZero) && s.zero_stage == 3) {
    fmt::print(
        "zero      ZeRO stage 3: parameters, gradients and optimizer state sharded on dim 0 over "
        "{} ranks ({}), parameters all-gathered for forward and backward (FSDP)\n",
        s.world_size, comm::backend_name(s.backend));
  } else if (s.has_mode(ModeKind::kZero)) {
    fmt::print(
        "zero      ZeRO stage {}: optimizer state{} sharded over {} ranks ({}), parameters "
        "broadcast from their owners after each step\n",
        s.zero_stage, s.zero_stage >= 2 ? " and gradients" : "", s.world_size,
        comm::backend_name(s.backend));
  }
  if (s.has_per_rank_mode() && s.sync_bn) {
    fmt::print("syncbn    BatchNorm layers synchronised over the ranks ({})\n",
               modes::joined_mode_names(modes::per_rank_modes(s.modes)));
  }
  if (s.has_mode(ModeKind::kDdp) && !context.on_cuda()) {
    const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
    fmt::print("ddp       running {} CPU rank(s) over {}{}\n", s.world_size,
               comm::backend_name(s.backend),
               s.world_size > cores
                   ? fmt::format(" — {} ranks on {} cores: throughput figures are oversubscribed",
                                 s.world_size, cores)
                   : "");
  }
}

}  // namespace

void print_run_header(const training::RunSetup& s, const runtime::ExecutionContext& context,
                      const scenarios::ScenarioInstance& instance,
                      const data::GlobalBatchPlan& plan, modes::GradRecordKind grad) {
  const scenarios::ScenarioSpec& spec = *s.spec;
  std::vector<std::string> names;
  for (modes::ModeKind m : s.modes) names.push_back(modes::mode_name(m));
  fmt::print("{} — run {}\n", version_line(), spec.name);
  fmt::print("scenario  {}: {}, {}\n", spec.name, spec.model_name, scenarios::describe_loss(spec));
  if (!spec.model_file.empty()) fmt::print("model     {}: {}\n", spec.model_file, spec.model_notes);
  if (!spec.configured_by.empty()) {
    fmt::print("config    {} (base {})\n", spec.configured_by, spec.base);
  }
  fmt::print("data      {}; shuffle={} seed={}\n", instance.dataset->describe(), spec.shuffle,
             s.seed);
  if (s.data_on_device) {
    const std::string why_not = data::why_not_on_device(*instance.dataset);
    fmt::print("          --data-on-device: {}\n",
               why_not.empty() ? "materialised on each process's device, batches gathered there"
                               : why_not + ": collated on the host");
  }
  print_plan(s, plan);
  const std::string amp = s.spec->amp == scenarios::AmpKind::kOff
                              ? std::string()
                              : fmt::format(" under autocast {}", scenarios::amp_name(s.spec->amp));
  fmt::print("modes     {}; {}{}, {} thread(s) per process, gradients compared {}\n",
             fmt::join(names, ","), context.dtype_name(), amp, context.threads(),
             modes::grad_record_name(grad));
  fmt::print("phases    check {} step(s); perf {} warm-up + {} timed step(s), {} scaling\n",
             s.check_steps, s.warmup_steps, s.perf_steps, s.strong_scaling ? "strong" : "weak");
  if (!s.eval_size_note.empty()) fmt::print("eval      {}\n", s.eval_size_note);
  print_device(s, context);
  print_mode_options(s, context);
  std::fflush(stdout);
}

}  // namespace ddpbench::run
