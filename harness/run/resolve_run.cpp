// resolve_run.cpp — see resolve_run.h.
#include "run/resolve_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "comm/backend_support.h"
#include "errors.h"
#include "inputs/data_file.h"
#include "inputs/synthetic_data.h"
#include "launch/core_pinning.h"
#include "launch/local_address.h"
#include "modes/ddp/comm_hook.h"
#include "quoted_input.h"
#include "requests/run_options.h"
#include "run/device_choice.h"
#include "run/resolve_engines.h"
#include "run/shared_checks.h"
#include "scenarios/optim/torch_version_compat.h"
#include "scenarios/scenario_config.h"
#include "scenarios/script_scenario.h"
#include "scenarios/training_recipe.h"
#include "training/fault_refusals.h"
#include "training/progress_line.h"

namespace ddpbench::run {
namespace {

std::vector<modes::ModeKind> resolve_modes(const std::vector<std::string>& names,
                                           int64_t world_size) {
  if (names.empty()) {
    return world_size > 1
               ? std::vector<modes::ModeKind>{modes::ModeKind::kSingle, modes::ModeKind::kDdp}
               : std::vector<modes::ModeKind>{modes::ModeKind::kSingle};
  }
  std::vector<modes::ModeKind> out;
  for (const auto& name : names) {
    const std::optional<modes::ModeKind> m = modes::parse_mode(name);
    if (!m) {
      throw InputError(fmt::format("unknown mode {} in --modes: known modes are {}",
                                   quoted_input(name), modes::known_mode_names()));
    }
    // A mode listed twice would train twice and write its files twice (the second rename
    // failed: "state_ddp.pt: cannot move into place", exit 2, after training).
    if (std::find(out.begin(), out.end(), *m) != out.end()) {
      throw InputError(fmt::format(
          "--modes lists {} twice (a repeated --modes adds to the list): list each mode once",
          modes::mode_name(*m)));
    }
    out.push_back(*m);
  }
  return out;
}

void check_data_dir(const std::string& dir) {
  if (dir.empty()) return;
  std::error_code ec;
  const auto status = std::filesystem::status(dir, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    throw InputError(fmt::format("--data-dir {}: no such directory", quoted_input(dir)));
  }
  if (status.type() != std::filesystem::file_type::directory) {
    throw InputError(fmt::format(
        "--data-dir {} is not a directory: pass the folder that holds the dataset's files",
        quoted_input(dir)));
  }
}

// Each process runs `threads` intra-op threads, so they count against the cores too:
// --threads 100000 grew past 1,900 threads without a word.
constexpr int64_t kMaxThreads = 256;

void check_oversubscription(const requests::RunRequest& o, int64_t world_size, int64_t cores,
                            bool self_launched) {
  if (self_launched) check_rank_count(world_size, cores, o.oversubscribe);
  if (o.threads > kMaxThreads) {
    throw InputError(fmt::format("--threads {}: at most {} intra-op threads per process", o.threads,
                                 kMaxThreads));
  }
  if (o.threads > cores && !o.oversubscribe) {
    throw InputError(fmt::format(
        "--threads {}: this machine has {} cores, and intra-op threads beyond them only contend; "
        "pass at most {}, or add --oversubscribe to run them anyway",
        o.threads, cores, cores));
  }
}

// Spawned workers and scale's points work in private folders under TMPDIR: a TMPDIR that is not
// a writable folder would fail there, after the launch, with a library's error.
void check_temp_dir() {
  const char* tmpdir = std::getenv("TMPDIR");
  if (tmpdir == nullptr || *tmpdir == '\0') return;
  std::error_code ec;
  if (!std::filesystem::is_directory(tmpdir, ec) || access(tmpdir, W_OK | X_OK) != 0) {
    throw InputError(fmt::format(
        "TMPDIR={} is not a writable folder: ddpbench keeps its workers' files there; export "
        "TMPDIR as an existing writable folder, or unset it (then /tmp is used)",
        quoted_input(tmpdir)));
  }
}

// Checkpoints are taken from, and resumes continue, the checked training: the perf phase trains
// a fresh model for timing only. The file itself is read by prepare_run (run/resume.h).
void check_checkpoint_flags(const requests::RunRequest& o) {
  if (o.perf_only && (o.checkpoint_every > 0 || !o.resume.empty())) {
    throw InputError(
        fmt::format("{} works on the checked training, which --perf-only skips: drop --perf-only",
                    o.resume.empty() ? "--checkpoint-every" : "--resume"));
  }
  if (o.bisect && !o.resume.empty()) {
    throw InputError(
        "--bisect re-runs the run in float64, which a checkpoint of this run cannot start: "
        "drop --bisect, or --resume");
  }
  if (!o.checkpoint_prefix.empty() && o.checkpoint_every == 0) {
    throw InputError(
        "--checkpoint-prefix names the keys of saved checkpoints: add "
        "--checkpoint-every N, or drop --checkpoint-prefix");
  }
}

// The scenario as configured (a built-in, a file, KEY VALUE overrides), with --model, --data and
// synthetic data applied.
std::shared_ptr<const scenarios::ScenarioSpec> resolve_scenario(
    const requests::RunRequest& o, const scenarios::ScenarioRegistry& registry) {
  // --model and --data set MODEL.FILE and DATA.FILE, which a scenario file may set too.
  scenarios::ScenarioSpec spec = scenarios::configure_scenario(registry, scenario_source(o));
  const std::string model_file = spec.model_file;
  const std::string data_file = spec.data_file;
  if (!model_file.empty()) spec = scenarios::with_script_model(std::move(spec), model_file);
  if ((!data_file.empty() || spec.synthetic.requested()) && !o.data_dir.empty()) {
    throw InputError(fmt::format("{} and --data-dir both name the training data: pass one of them",
                                 data_file.empty() ? "--input-shape" : "--data"));
  }
  if (!data_file.empty()) spec = inputs::with_data_file(std::move(spec), data_file);
  if (spec.synthetic.requested()) spec = inputs::with_synthetic_data(std::move(spec));
  return std::make_shared<const scenarios::ScenarioSpec>(std::move(spec));
}

// The world, its modes and the plan: steps, batch, seed, dtype, the sampler, the data folder.
void resolve_plan(const requests::RunRequest& o, std::optional<int64_t> world_size,
                  training::RunSetup& s) {
  s.world_size = world_size.value_or(o.world_size);
  s.modes = resolve_modes(o.modes, s.world_size);
  s.steps = o.steps > 0 ? o.steps : s.spec->steps;
  if (o.steps <= 0 && o.max_default_steps > 0) s.steps = std::min(s.steps, o.max_default_steps);
  s.global_batch = o.batch_size > 0 ? o.batch_size : s.spec->global_batch;
  s.seed = o.seed >= 0 ? o.seed : s.spec->seed;
  const std::string dtype = o.dtype.empty() ? s.spec->dtype : o.dtype;
  s.context.dtype = dtype == "float64" ? at::kDouble : at::kFloat;
  s.drop_last = o.drop_last || s.spec->sampler_drop_last;
  // A batch K does not divide is split 7,7,6-wise (data/batch_plan.h); one below K would leave a
  // rank with nothing to train on at every step.
  if (s.global_batch < s.world_size) {
    throw InputError(fmt::format(
        "global batch {} leaves some of the {} ranks without a sample per step: pass --batch-size "
        "of at least {}",
        s.global_batch, s.world_size, s.world_size));
  }
  if (!o.data_dir.empty() && !s.spec->reads_data_dir) {
    throw InputError(fmt::format(
        "--data-dir does not apply to {}: it trains on generated data ({}); drop --data-dir",
        s.spec->name, s.spec->dataset_name));
  }
  check_data_dir(o.data_dir);
  s.request = {s.seed, o.data_dir};
}

// This machine's part: threads, the backend, the rendezvous address, the device.
void resolve_machine(const requests::RunRequest& o, std::optional<int64_t> world_size,
                     training::RunSetup& s) {
  const int64_t cores = machine_cores();
  check_oversubscription(o, s.world_size, cores, !world_size.has_value());
  check_temp_dir();
  s.context.threads = threads_per_process(o, s.world_size);
  // This parent spawns the ranks (no world given) and each pins itself (Note [Pinned ranks]).
  s.cpu_pinning =
      s.has_per_rank_mode()
          ? launch::pinning_description(!world_size.has_value(), !o.no_pin_cores, s.world_size,
                                        s.context.threads, launch::allowed_cores())
          : "off: no rank processes (single and dp run in this one)";
  s.backend = comm::require_known_backend(o.backend);
  // Only a backend other than the default can have been asked for on purpose.
  if (s.backend != comm::default_backend() && !s.has_per_rank_mode()) {
    throw InputError(fmt::format(
        "--backend {} only applies to the ddp and zero modes, which this run does not have "
        "(modes {}): add ddp or zero to --modes, or drop --backend",
        comm::backend_name(s.backend), modes::joined_mode_names(s.modes)));
  }
  if (o.debug_collectives && !s.has_per_rank_mode()) {
    throw InputError(fmt::format(
        "--debug-collectives checks the collectives of the ddp and zero modes, which this run "
        "does not have (modes {}): add ddp or zero to --modes, or drop --debug-collectives",
        modes::joined_mode_names(s.modes)));
  }
  s.debug_collectives = o.debug_collectives;
  s.master_addr = o.master_addr;
  // Spawned workers rendezvous through a private file and gloo listens on --master-addr: an
  // address that is not this machine's would fail inside every worker, after the launch.
  if (!world_size && s.has_per_rank_mode() && comm::traits(s.backend).listens_on_master_addr) {
    if (const auto why = launch::why_not_local(s.master_addr)) {
      throw InputError(fmt::format(
          "--master-addr {} {}: spawned workers listen on it, so pass an address of this "
          "machine (default 127.0.0.1)",
          quoted_input(s.master_addr), *why));
    }
  }
  {
    s.context.gpus = runtime::probe_gpus();
    const runtime::GpuInfo& gpus = s.context.gpus;
    DeviceQuestion q;
    q.device = o.device;
    q.share_gpus = o.share_gpus;
    q.backend = s.backend;
    q.world_size = s.world_size;
    q.dp = s.has_mode(modes::ModeKind::kDp);
    q.ddp = s.has_per_rank_mode();
    q.self_launched = !world_size.has_value();
    q.usable_devices = gpus.usable_devices;
    q.no_device_reason = gpus.status;
    s.context.device = choose_device(q);
    s.share_gpus = o.share_gpus;
    s.context.numerics.allow_tf32 = o.tf32;
  }
  s.data_on_device = o.data_on_device;
}

void resolve_comparison(const requests::RunRequest& o, training::RunSetup& s) {
  // float64 exposes algorithmic errors over many free-running steps; below it, deep networks'
  // trajectories separate by rounding within a few steps, so each step is judged from the same
  // state instead. Lockstep judges each step from the exact reference's state: with single every
  // mode against it, without single ddp and zero against each other (matches_ddp). With neither
  // there is nothing to compare, and every mode trains freely (its state file is then its own
  // trajectory, e.g. for the PyTorch oracle); an explicit --comparison lockstep is refused there,
  // not quietly dropped.
  const bool pair = s.has_mode(modes::ModeKind::kDdp) && s.has_mode(modes::ModeKind::kZero);
  const bool comparable = s.has_mode(modes::ModeKind::kSingle) || pair;
  if (o.comparison == requests::ComparisonChoice::kLockstep && !comparable) {
    throw InputError(
        "--comparison lockstep starts every step of a judged mode from its reference's state: "
        "add single to --modes (or judge ddp and zero against each other: --modes ddp,zero), or "
        "drop --comparison");
  }
  s.lockstep =
      comparable &&
      (o.comparison == requests::ComparisonChoice::kLockstep ||
       (o.comparison == requests::ComparisonChoice::kAuto && s.context.dtype != at::kDouble));
}

// The phases and what runs around them: check and perf steps, warm-up, --bisect, checkpoints,
// the progress line and the outputs.
void resolve_phases(const requests::RunRequest& o, training::RunSetup& s) {
  if (o.check_only && o.perf_only) {
    throw InputError("--check-only and --perf-only exclude each other: pass at most one");
  }
  if (o.warmup < 0) throw InputError("--warmup must be >= 0");
  if (o.bisect && s.context.dtype == at::kDouble) {
    throw InputError(
        "--bisect re-runs a failing run in float64, and this run is float64 already: "
        "drop --bisect, or run in float32");
  }
  if (o.bisect && (o.perf_only || !s.has_mode(modes::ModeKind::kSingle))) {
    throw InputError(
        "--bisect re-runs failing checks, and this run has none: add single to "
        "--modes and drop --perf-only");
  }
  s.bisect = o.bisect;
  if (o.repeats > 1 && o.check_only) {
    throw InputError(
        "--repeats repeats the perf phase, and --check-only runs none: drop one of them");
  }
  s.repeats = o.repeats;
  if (o.trace && o.perf_only) {
    throw InputError(
        "--trace records the checked steps, and --perf-only runs none: drop one of them");
  }
  check_checkpoint_flags(o);
  s.checkpoint_every = o.checkpoint_every;
  s.checkpoint_prefix = o.checkpoint_prefix;
  s.check_steps = o.perf_only ? 0 : s.steps;
  s.perf_steps = o.check_only ? 0 : s.steps;
  s.warmup_steps = o.check_only ? 0 : o.warmup;
  s.strong_scaling = o.strong;
  s.progress = training::progress_wanted(o.quiet);
  s.quiet = o.quiet;
  s.export_batches = o.export_batches;
  s.trace = o.trace;
  s.out = o.out;
  s.eval_size = o.eval_size < 0 ? s.spec->eval_size : o.eval_size;
}

// --grad-check's kind ("auto": none, chosen by the model's size); the CLI offered only these names.
std::optional<modes::GradRecordKind> grad_check_of(const std::string& name) {
  for (const modes::GradRecordKind kind : modes::kGradRecordKinds) {
    if (name == modes::grad_record_name(kind)) return kind;
  }
  if (name == "auto") return std::nullopt;
  throw InputError(
      fmt::format("--grad-check {}: use auto, full or fingerprint", quoted_input(name)));
}

}  // namespace

scenarios::ScenarioSource scenario_source(const requests::RunRequest& request) {
  scenarios::ScenarioSource source{request.scenario, request.config, request.overrides, {}};
  for (const requests::KeyFlag& f : requests::key_flags(request)) {
    if (!f.value.empty()) source.flags.push_back({f.flag, f.key, f.value});
  }
  return source;
}

training::RunSetup resolve_run(const requests::RunRequest& o,
                               const scenarios::ScenarioRegistry& registry,
                               std::optional<int64_t> world_size) {
  training::RunSetup s;
  s.spec = resolve_scenario(o, registry);
  resolve_plan(o, world_size, s);
  resolve_machine(o, world_size, s);
  s.timeout = checked_timeout(o.timeout);
  resolve_ddp(o, s);
  s.grad_check = grad_check_of(o.grad_check);
  resolve_comparison(o, s);
  s.sync_bn = o.sync_bn || s.spec->sync_bn;
  s.recorded_options = requests::recorded_options(o);
  resolve_accumulation(o, s);
  check_amp(o, s);
  resolve_zero(o, s);
  resolve_phases(o, s);
  if (!o.inject_fault.empty()) {
    s.fault = modes::parse_fault(o.inject_fault);
    training::check_fault(s);
  }
  return s;
}

}  // namespace ddpbench::run
