// resolve_engines.cpp — see resolve_engines.h.
#include "run/resolve_engines.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

#include "comm/backend_support.h"
#include "errors.h"
#include "modes/ddp/comm_hook.h"
#include "quoted_input.h"
#include "scenarios/optim/torch_version_compat.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::run {
namespace {

// The backends that can sum bfloat16, as a user would pick one: "--backend mpi or nccl".
std::string bf16_backends() {
  std::string out;
  for (const comm::BackendTraits& t : comm::backend_table()) {
    if (!comm::supports_sum(t.backend, at::kBFloat16)) continue;
    out += fmt::format("{}--backend {}{}", out.empty() ? "" : " or ", t.name,
                       t.needs_mpi_launcher ? " (under mpirun)" : "");
  }
  return out;
}

// At least one byte (0 bytes would put every parameter in its own bucket without saying so) and
// at most 1 TiB, which keeps the byte count far inside int64.
int64_t checked_bucket_bytes(const char* flag, double mib) {
  constexpr double kMaxMib = 1 << 20;
  const double bytes = mib * (1 << 20);
  if (!std::isfinite(mib) || bytes < 1 || mib > kMaxMib) {
    throw InputError(fmt::format("{} {}: pass a size in MiB above 0 and at most {:.0f} (1 TiB)",
                                 flag, mib, kMaxMib));
  }
  return static_cast<int64_t>(bytes);
}

// --ddp-impl c10d drives c10d's Reducer over c10d's process group, which only the gloo
// communicator is; the options only PyTorch's engine has need it.
void check_c10d_options(const requests::RunRequest& o, const training::RunSetup& s) {
  const bool c10d = s.ddp.impl == modes::ddp::DdpImpl::kC10d;
  // An engine's flag without the mode it drives changes nothing, yet was recorded: the gate then
  // refused two runs that computed the same thing (config.ddp.impl).
  if (!s.has_mode(modes::ModeKind::kDdp)) {
    for (const auto& [flag, set] :
         {std::pair{"--ddp-impl " + o.ddp_impl, o.ddp_impl != requests::RunRequest{}.ddp_impl},
          std::pair{std::string("--static-graph"), o.static_graph},
          std::pair{std::string("--gradient-as-bucket-view"), o.gradient_as_bucket_view}}) {
      if (set) {
        throw InputError(fmt::format(
            "{} only applies to the ddp mode, which this run does not have (modes {}): add ddp to "
            "--modes, or drop {}",
            flag, modes::joined_mode_names(s.modes), flag.substr(0, flag.find(' '))));
      }
    }
  }
  for (const auto& [flag, set] :
       {std::pair{"--static-graph", o.static_graph},
        std::pair{"--gradient-as-bucket-view", o.gradient_as_bucket_view}}) {
    if (set && !c10d) {
      throw InputError(fmt::format(
          "{} is an option of PyTorch's own DDP engine, and --ddp-impl {} is ddpbench's: add "
          "--ddp-impl c10d, or drop {}",
          flag, o.ddp_impl, flag));
    }
  }
  if (c10d && s.has_mode(modes::ModeKind::kDdp) && s.backend != comm::Backend::kGloo) {
    throw InputError(fmt::format(
        "--ddp-impl c10d runs PyTorch's Reducer on c10d's ProcessGroupGloo, and ddpbench drives "
        "--backend {} through its own communicator, not a c10d ProcessGroup, so that Reducer "
        "cannot use it: use --backend gloo (it also reduces CUDA tensors), or --ddp-impl bucketed",
        comm::backend_name(s.backend)));
  }
  // c10d's Reducer allreduces on the process group itself, past ddpbench's communicator: a
  // fingerprint check that sees the other collectives only would pass a desynchronised gradient.
  if (c10d && s.has_mode(modes::ModeKind::kDdp) && o.debug_collectives) {
    throw InputError(
        "--debug-collectives checks the collectives ddpbench's communicator issues, and c10d's "
        "Reducer allreduces on its process group directly (its flight recorder, "
        "TORCH_FR_BUFFER_SIZE, is PyTorch's): use --ddp-impl bucketed, or drop "
        "--debug-collectives");
  }
}

}  // namespace

// --amp: autocast over float32 parameters, judged against an exact reference that rounds each
// rank's gradients as the rank does (Note [Mixed precision judged against its own reference] in
// docs/ARCHITECTURE.md); free-running, against the drift Note [Mixed precision free-running]
// measures; --bisect's float64 re-run drops autocast (Note [Bisect under autocast]).
void check_amp(const requests::RunRequest& o, const training::RunSetup& s) {
  const scenarios::AmpKind amp = s.spec->amp;
  // The GradScaler's settings without a GradScaler change nothing, yet were recorded.
  if (amp != scenarios::AmpKind::kFp16) {
    for (const auto& [flag, given] : {std::pair{"--grad-scaler-init", o.grad_scaler_init},
                                      std::pair{"--growth-interval", o.growth_interval}}) {
      if (!given.empty()) {
        throw InputError(fmt::format(
            "{} sets the GradScaler of --amp fp16, and this run's --amp is {}: add --amp fp16, "
            "or drop {}",
            flag, scenarios::amp_name(amp), flag));
      }
    }
  }
  if (amp == scenarios::AmpKind::kOff) return;
  const std::string flag = fmt::format("--amp {}", scenarios::amp_name(amp));
  if (s.context.dtype == at::kDouble) {
    throw InputError(fmt::format(
        "{} autocasts float32 training, and this run is float64: drop --dtype float64 (or "
        "TRAIN.DTYPE), or --amp",
        flag));
  }
  const c10::DeviceType device =
      s.context.device == runtime::DeviceKind::kCuda ? c10::DeviceType::CUDA : c10::DeviceType::CPU;
  if (const auto why =
          scenarios::compat::amp_unsupported(device, *scenarios::autocast_dtype_of(amp))) {
    throw InputError(fmt::format("{}: {}", flag, *why));
  }
}

// Gradient accumulation: A micro-steps per optimizer step in dp, ddp and zero, judged against
// single trained on the whole A x B batch at once. That equality needs equal micro-batches of a
// loss that is a mean of per-sample terms (the scaled micro-losses then sum to the global mean).
void resolve_accumulation(const requests::RunRequest& o, training::RunSetup& s) {
  s.accumulation_steps =
      o.accumulation_steps > 0 ? o.accumulation_steps : s.spec->accumulation_steps;
  s.no_sync = o.no_sync;
  const int64_t a = s.accumulation_steps;
  const bool parallel = s.has_per_rank_mode() || s.has_mode(modes::ModeKind::kDp);
  if (!s.no_sync && (a == 1 || !s.has_mode(modes::ModeKind::kDdp))) {
    throw InputError(
        "--no-sync off only matters to ddp with gradient accumulation: add ddp to --modes and "
        "--accumulation-steps 2 or more, or drop --no-sync");
  }
  if (!s.no_sync && s.has_mode(modes::ModeKind::kZero)) {
    throw InputError(
        "--no-sync off: zero accumulates every micro-step locally and reduces once per step "
        "(DDP's no_sync()); it has no per-micro-step reduction to judge: drop --no-sync off, or "
        "zero from --modes");
  }
  if (a == 1 || !parallel) return;
  if (s.global_batch % (s.world_size * a) != 0) {
    throw InputError(fmt::format(
        "global batch {} does not split into {} ranks x {} accumulation micro-steps: pass "
        "--batch-size as a multiple of {}",
        s.global_batch, s.world_size, a, s.world_size * a));
  }
  if (!scenarios::loss_is_sample_mean(s.spec->loss)) {
    throw InputError(fmt::format(
        "--accumulation-steps {}: scenario {}'s {} loss is not a mean of per-sample terms, so "
        "accumulated micro-batch losses are not the loss of the whole batch; use a scenario "
        "with a mean loss, or --accumulation-steps 1",
        a, s.spec->name, scenarios::loss_name(s.spec->loss)));
  }
}

// The zero mode's stage (ZeRO stages 1, 2 and 3).
void resolve_zero(const requests::RunRequest& o, training::RunSetup& s) {
  const bool zero = s.has_mode(modes::ModeKind::kZero);
  if (o.zero_stage > 0 && !zero) {
    throw InputError(
        "--zero-stage applies to the zero mode: add zero to --modes, or drop --zero-stage");
  }
  s.zero_stage = o.zero_stage > 0 ? o.zero_stage : 1;
  if (o.shard_group == 0) return;
  const int64_t k = s.world_size;
  const int64_t g = o.shard_group;
  if (!zero || s.zero_stage == 1) {
    throw InputError(
        "--shard-group shards gradients (and parameters) within groups of ranks: add --modes "
        "zero --zero-stage 2 (or 3)");
  }
  if (g == 1) {
    throw InputError(
        "--shard-group 1 shards nothing (every rank a replica is DDP): use --modes ddp, or a "
        "--shard-group of 2 or more");
  }
  if (g > k || k % g != 0) {
    throw InputError(fmt::format(
        "--shard-group {} does not divide the world of {} ranks into equal shard groups: pass "
        "a divisor of --gpus {} (or drop --shard-group to shard over all of them)",
        g, k, k));
  }
  // S = K is one shard group and no replica: the zero mode without --shard-group, which a report
  // recording the flag would pass off as HSDP (docs/zero.md: 2 <= S < K).
  if (g == k) {
    throw InputError(fmt::format(
        "--shard-group {} is the whole world of {} ranks: one shard group and no replica is the "
        "zero mode without HSDP; drop --shard-group, or pass an S that divides {} with 2 <= S < "
        "{}",
        g, k, k, k));
  }
  s.shard_group = g;
}

// The DDP engine's settings: the engine, its buckets, its hook, its buffer and graph options.
void resolve_ddp(const requests::RunRequest& o, training::RunSetup& s) {
  s.ddp.impl = modes::ddp::parse_ddp_impl(o.ddp_impl);
  check_c10d_options(o, s);
  s.ddp.reducer.limits.bucket_cap_bytes = checked_bucket_bytes("--bucket-cap-mb", o.bucket_cap_mb);
  s.ddp.reducer.limits.first_bucket_bytes =
      checked_bucket_bytes("--first-bucket-mb", o.first_bucket_mb);
  s.ddp.reducer.limits.cap_given = o.bucket_cap_given;
  s.ddp.static_graph = o.static_graph;
  s.ddp.gradient_as_bucket_view = o.gradient_as_bucket_view;
  s.ddp.reducer.comm_hook = modes::ddp::parse_comm_hook(o.comm_hook);
  if (s.ddp.reducer.comm_hook == modes::ddp::CommHookKind::kBf16Compress &&
      !comm::supports_sum(s.backend, at::kBFloat16)) {
    // c10d's Reducer runs only on ProcessGroupGloo (check_c10d_options), so another backend is
    // no advice there.
    if (s.ddp.impl == modes::ddp::DdpImpl::kC10d) {
      throw InputError(fmt::format(
          "--comm-hook bf16 needs a bfloat16 sum, which c10d's ProcessGroupGloo (the only one "
          "--ddp-impl c10d runs on) lacks; use --comm-hook fp16, or --ddp-impl bucketed with {}",
          bf16_backends()));
    }
    throw InputError(fmt::format(
        "--comm-hook bf16 needs a bfloat16 sum, which --backend {} lacks; use {}, or --comm-hook "
        "fp16",
        comm::backend_name(s.backend), bf16_backends()));
  }
  s.ddp.reducer.find_unused_parameters = o.find_unused_parameters;
  s.ddp.broadcast_buffers = !o.no_broadcast_buffers;
}

}  // namespace ddpbench::run
