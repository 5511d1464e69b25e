// fault_table.h — one row per `--inject-fault` kind: its name, the fields it takes, the modes and
// options it needs, what it does and how the run catches it. Parsing (fault_injection.cpp), the
// refusals before training (training/fault_refusals.cpp), the detection rule
// (training/fault_detection.cpp), `run --help` and docs/faults.md's table all read these rows,
// so a kind is added in one place (and the code path that injects it). No torch here.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "modes/common/fault_injection.h"
#include "modes/common/mode_kind.h"

namespace ddpbench::modes {

// The fields of KIND:rank=R,step=S[,eps=E][,tensor=NAME] a kind takes. rank and step, when a kind
// takes them, are required (a fault at a made-up place proves nothing); eps and tensor are not.
enum FaultField : unsigned {
  kFaultRank = 1u << 0,
  kFaultStep = 1u << 1,
  kFaultEps = 1u << 2,
  kFaultTensor = 1u << 3,
  kFaultMs = 1u << 4,
};

// What else in the run a kind needs, beyond one of its modes.
enum FaultNeed : unsigned {
  kNeedsNothing = 0,
  kNeedsFp16Amp = 1u << 0,          // it tests the GradScaler of --amp fp16
  kNeedsAccumulation = 1u << 1,     // --accumulation-steps 2 or more
  kNeedsSyncBn = 1u << 2,           // --sync-bn or resnet18_syncbn
  kNeedsLockstep = 1u << 3,         // only the lockstep comparison's optimizer_state sees it
  kNeedsBufferBroadcast = 1u << 4,  // it skips the broadcast --no-broadcast-buffers removes
  kNeedsRankAboveZero = 1u << 5,    // rank 0 is the source everything is compared with
  kNeedsPerfPhase = 1u << 6,        // it slows the timed steps, which --check-only has none of
  kNeedsOwnCommunicator = 1u << 7,  // it changes what ddpbench's communicator issues (not c10d's)
  kNeedsPeers = 1u << 8,            // it desynchronises ranks, so there must be two or more
  kNeedsReplicas = 1u << 9,         // it acts on HSDP's replicas: --shard-group below the world
  // Note [A fault needs a judge that can see it]: it keeps the ranks consistent (every rank
  // applies the same wrong average, or the owner broadcasts its wrong shard), so only a
  // comparison with training the fault did not go into sees it: single (the exact reference), or
  // for a kind that goes into zero alone, ddp in the same run (matches_ddp).
  kNeedsReference = 1u << 10,
  kNeedsNoDecayGroup = 1u << 11,  // OPTIM.NO_DECAY names a parameter, and OPTIM.WEIGHT_DECAY > 0
  kNeedsSchedule = 1u << 12,      // SCHED.* changes the rate between step S and step S+1
  kNeedsTiedParameter = 1u << 13,  // the model uses a parameter twice (ScenarioSpec)
};

constexpr unsigned mode_bit(ModeKind mode) { return 1u << static_cast<unsigned>(mode); }

struct FaultRow {
  FaultKind kind;
  const char* name;
  unsigned fields;  // FaultField bits
  unsigned modes;   // mode_bit()s of the modes it goes into
  unsigned needs;   // FaultNeed bits
  // A run the fault went into (one of `modes`) FAILs with an `injected_fault` check when no check
  // of that mode failed, instead of passing blind (training/fault_detection.h). False only where
  // a PASS is the right answer or none is given: crash, hang and nan end the run (exit 3), slow
  // changes only the timed steps, and inf is an overflow every rank must skip as the reference
  // does (its loss_scale check judges exactly that).
  bool must_be_caught;
  const char*
      effect;  // what it does to the run, one sentence for --help's reader and docs/faults.md
  const char* detected;  // what catches it
};

inline constexpr size_t kFaultKinds = static_cast<size_t>(FaultKind::kFaultKindCount);

// Every kind, in FaultKind's order (the build fails when a kind has no row, or a row sits out of
// order: fault_table.cpp's static_assert).
const std::array<FaultRow, kFaultKinds>& fault_rows();
const FaultRow& fault_row(FaultKind kind);
// nullptr for an unknown name.
const FaultRow* find_fault_row(const std::string& name);

// "grad:rank=R,step=S[,eps=E][,tensor=NAME]": the row's own syntax.
std::string fault_syntax(const FaultRow& row);
// A parsed fault as its row writes it, with the fields the row takes and nothing else
// ("divide:step=1", "grad:rank=1,step=2,eps=0.001,tensor=fc.weight"): the report's
// config.inject_fault, the trace's environment and every message name it so.
std::string fault_text(const FaultSpec& fault);
// "ddp or zero", "dp": the modes a row goes into.
std::string fault_modes_text(const FaultRow& row);
// The whole grammar, every kind with its modes and needs (and its fields where they are not
// rank and step): the --inject-fault help, and
// the tail of every parse error (after "expected ").
std::string fault_usage();
// "grad, crash, ..., replica": every kind's name, for an error line that must stay short.
std::string fault_kind_names();
// docs/faults.md's fault table (a docs test holds the page to it).
std::string fault_table_markdown();

// Whether the run's modes hold a judge for a kNeedsReference kind going into `fault_modes`
// (Note [A fault needs a judge that can see it]): single, or ddp where the kind goes into zero
// alone. `run_modes` are mode_bit()s.
bool has_reference_for(const FaultRow& row, unsigned run_modes);

}  // namespace ddpbench::modes
