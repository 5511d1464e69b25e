// fault_refusals.cpp — see fault_refusals.h. The modes and needs come from the fault's row; the
// rules here only say what each need means for a run and how to meet it.
#include "training/fault_refusals.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

#include "errors.h"
#include "modes/common/fault_table.h"
#include "modes/common/trained_parameters.h"
#include "modes/ddp/comm_hook.h"
#include "quoted_input.h"
#include "scenarios/optim/parameter_groups.h"
#include "scenarios/scenario.h"
#include "training/fault_detection.h"

namespace ddpbench::training {
namespace {

void check_modes(const RunSetup& s, const modes::FaultRow& row) {
  for (modes::ModeKind m : s.modes) {
    if (row.modes & modes::mode_bit(m)) return;
  }
  const std::string names = modes::fault_modes_text(row);
  const bool one = names.find(' ') == std::string::npos;
  throw InputError(fmt::format("--inject-fault {} needs the {} mode (add {} to --modes)", row.name,
                               names, one ? names : "one"));
}

unsigned run_modes(const RunSetup& s) {
  unsigned bits = 0;
  for (modes::ModeKind m : s.modes) bits |= modes::mode_bit(m);
  return bits;
}

// "ddp and zero": the run's modes the fault goes into.
std::string judged_modes_text(const RunSetup& s, const modes::FaultRow& row) {
  std::vector<std::string> names;
  for (modes::ModeKind m : s.modes) {
    if (row.modes & modes::mode_bit(m)) names.emplace_back(modes::mode_name(m));
  }
  return fmt::format("{}", fmt::join(names, " and "));
}

// The trained parameters OPTIM.NO_DECAY takes out of weight decay.
std::vector<size_t> no_decay_parameters(const RunSetup& s) {
  const modes::TrainedParameters trained =
      modes::trained_parameters(*s.spec->build_model(s.seed).ptr());
  return scenarios::no_decay_indices(s.spec->optimizer.no_decay, trained.names, trained.tensors);
}

// The first need of `row` the run does not meet, as the error line's text; empty if none.
std::string unmet_need(const RunSetup& s, const modes::FaultRow& row) {
  const std::string name = row.name;
  if ((row.needs & modes::kNeedsAccumulation) && s.accumulation_steps == 1) {
    return fmt::format(
        "--inject-fault {} needs gradient accumulation: add --accumulation-steps 2 or more (or "
        "use grad_accum)",
        name);
  }
  if ((row.needs & modes::kNeedsFp16Amp) && s.spec->amp != scenarios::AmpKind::kFp16) {
    return fmt::format(
        "--inject-fault {} tests the GradScaler of --amp fp16, which this run does not use: add "
        "--amp fp16",
        name);
  }
  if ((row.needs & modes::kNeedsRankAboveZero) && s.fault->rank == 0) {
    return fmt::format(
        "--inject-fault {}: every rank's {} is compared with rank 0's, whose is the source; pick "
        "rank=1 or higher",
        name, row.kind == modes::FaultKind::kScaler ? "scale" : "buffers");
  }
  if ((row.needs & modes::kNeedsBufferBroadcast) && !s.ddp.broadcast_buffers) {
    return fmt::format(
        "--inject-fault {} skips the buffer broadcast, which --no-broadcast-buffers turns off "
        "already: drop one of them",
        name);
  }
  if ((row.needs & modes::kNeedsLockstep) && !s.lockstep) {
    // Free-running, a state scaled at the last step would move nothing any check sees.
    return fmt::format(
        "--inject-fault {} is caught by the lockstep comparison's optimizer_state check, and this "
        "run trains free-running: add single to --modes and run in float32, or pass --comparison "
        "lockstep",
        name);
  }
  if ((row.needs & modes::kNeedsPerfPhase) && s.perf_steps == 0) {
    return fmt::format(
        "--inject-fault {} slows the timed steps, and --check-only runs none: drop --check-only",
        name);
  }
  if ((row.needs & modes::kNeedsOwnCommunicator) && s.has_mode(modes::ModeKind::kDdp) &&
      s.ddp.impl == modes::ddp::DdpImpl::kC10d) {
    return fmt::format(
        "--inject-fault {} changes what ddpbench's communicator issues, and c10d's Reducer "
        "allreduces on its process group directly: use --ddp-impl bucketed",
        name);
  }
  if ((row.needs & modes::kNeedsPeers) && s.world_size < 2) {
    return fmt::format(
        "--inject-fault {} makes one rank's collectives differ from its peers', and this run has "
        "one rank: pass --gpus 2 or more",
        name);
  }
  if ((row.needs & modes::kNeedsReplicas) && !s.has_replicas()) {
    return fmt::format(
        "--inject-fault {} acts on HSDP's replicas, and this run has none: add --modes zero "
        "--zero-stage 2 (or 3) --shard-group S with S dividing --gpus and below it",
        name);
  }
  if ((row.needs & modes::kNeedsReference) && !modes::has_reference_for(row, run_modes(s)) &&
      !s.trace && !s.export_batches) {
    // Note [A fault needs a judge that can see it]. Under --trace or --export-batches the run
    // goes ahead: its trace is for `ddpbench diff` against a clean run, its batches and state for
    // an outside oracle (PyTorch's DDP), and the run itself FAILs with injected_fault.
    const bool zero_alone = row.modes == modes::mode_bit(modes::ModeKind::kZero);
    return fmt::format(
        "--inject-fault {} leaves every rank consistent (they all apply what it made), and this "
        "run compares {} with no reference, only its ranks with each other: add single to "
        "--modes{} so a reference sees it (or pass --trace to record it for ddpbench diff)",
        name, judged_modes_text(s, row),
        zero_alone ? " (or ddp, which zero is judged against)" : "");
  }
  const scenarios::OptimizerSpec& optim = s.spec->optimizer;
  if ((row.needs & modes::kNeedsNoDecayGroup) &&
      (optim.weight_decay == 0 || no_decay_parameters(s).empty())) {
    return fmt::format(
        "--inject-fault {} applies weight decay to the no-decay parameter group, and this run {}: "
        "set OPTIM.WEIGHT_DECAY above 0 and OPTIM.NO_DECAY (e.g. 1d,bias) in a scenario file",
        name, optim.weight_decay == 0 ? "decays nothing" : "has no such group");
  }
  if ((row.needs & modes::kNeedsSchedule) &&
      scenarios::scheduled_lr(optim.schedule, optim.lr, s.fault->step) ==
          scenarios::scheduled_lr(optim.schedule, optim.lr, s.fault->step + 1)) {
    return fmt::format(
        "--inject-fault {} steps with the next step's learning rate, and this run's schedule ({}) "
        "gives steps {} and {} the same rate: set SCHED.NAME warmup_cosine or step in a scenario "
        "file, or pick a step where the rate changes",
        name, name_in(scenarios::kScheduleNames, optim.schedule.kind), s.fault->step,
        s.fault->step + 1);
  }
  if ((row.needs & modes::kNeedsTiedParameter) && s.spec->tied_parameters.empty()) {
    return fmt::format(
        "--inject-fault {} doubles the gradient of a parameter the model uses twice, and {}'s "
        "model ties none: use --scenario gpt_tiny (its output projection is its token embedding)",
        name, s.spec->name);
  }
  if ((row.needs & modes::kNeedsSyncBn) && !s.sync_bn) {
    return fmt::format("--inject-fault {} needs SyncBN: add --sync-bn or use resnet18_syncbn",
                       name);
  }
  return "";
}

void check_fault_tensor(const RunSetup& s) {
  if (s.fault->tensor.empty()) return;
  // A frozen parameter has no gradient to fault: the engines reduce only what trains.
  const std::vector<std::string> names =
      modes::trained_parameters(*s.spec->build_model(s.seed).ptr()).names;
  if (std::find(names.begin(), names.end(), s.fault->tensor) != names.end()) return;
  const size_t shown = std::min<size_t>(3, names.size());
  throw InputError(fmt::format(
      "--inject-fault tensor {} is not a trained parameter of {}: name one of its parameters "
      "that require grad ({}{})",
      quoted_input(s.fault->tensor), s.spec->name,
      fmt::join(names.begin(), names.begin() + shown, ", "), shown < names.size() ? ", ..." : ""));
}

}  // namespace

void check_fault(const RunSetup& s) {
  const modes::FaultRow& row = modes::fault_row(s.fault->kind);
  check_modes(s, row);
  if (const std::string need = unmet_need(s, row); !need.empty()) throw InputError(need);
  // c10d's engine takes the bucket fault through an allreduce hook of its own, in place of the
  // run's compression hook (C10dEngineOptions::bucket_fault).
  if (s.fault->kind == modes::FaultKind::kBucket && s.ddp.impl == modes::ddp::DdpImpl::kC10d &&
      s.ddp.reducer.comm_hook != modes::ddp::CommHookKind::kAllreduce) {
    throw InputError(fmt::format(
        "--inject-fault bucket on --ddp-impl c10d skips a bucket through an allreduce hook, and "
        "this run reduces through --comm-hook {}: drop --comm-hook, or use --ddp-impl bucketed",
        modes::ddp::comm_hook_name(s.ddp.reducer.comm_hook)));
  }
  if (s.fault->rank >= s.world_size) {
    throw InputError(fmt::format("--inject-fault rank {} is outside a world of {} ranks",
                                 s.fault->rank, s.world_size));
  }
  if (s.check_steps == 0 && !modes::acts_on_timed_steps(*s.fault)) {
    throw InputError("--inject-fault needs the check phase (drop --perf-only)");
  }
  if ((row.fields & modes::kFaultStep) && s.fault->step >= s.steps) {
    throw InputError(
        fmt::format("--inject-fault step {} is beyond the run's {} steps", s.fault->step, s.steps));
  }
  check_fault_tensor(s);
  require_detectable_fault(s);
}

}  // namespace ddpbench::training
