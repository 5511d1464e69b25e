// fault_table.cpp — see fault_table.h. The rows say what each fault does; the code that injects it
// lives with the mode it goes into (the step loop, modes/ddp, modes/zero, training/evaluation).
#include "modes/common/fault_table.h"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

namespace ddpbench::modes {
namespace {

constexpr unsigned kSingle = mode_bit(ModeKind::kSingle);
constexpr unsigned kDp = mode_bit(ModeKind::kDp);
constexpr unsigned kDdp = mode_bit(ModeKind::kDdp);
constexpr unsigned kZero = mode_bit(ModeKind::kZero);
constexpr unsigned kAt = kFaultRank | kFaultStep;

constexpr std::array<FaultRow, kFaultKinds> kRows = {{
    {FaultKind::kGrad, "grad", kAt | kFaultEps | kFaultTensor, kDdp | kZero, kNeedsReference, true,
     "scales rank R's gradient of one tensor (the first parameter, or tensor=) by 1+eps (1e-3) "
     "before the allreduce at step S",
     "the gradients check, exit 1 (an eps below the run's gradient tolerance is refused)"},
    {FaultKind::kCrash, "crash", kAt, kDdp | kZero, kNeedsNothing, false,
     "rank R exits with an error at step S", "the launch: exit 3 naming the rank"},
    {FaultKind::kHang, "hang", kAt, kDdp | kZero, kNeedsNothing, false,
     "rank R stops responding at step S", "the timeout: exit 3 naming the rank"},
    {FaultKind::kNan, "nan", kAt, kDdp | kZero, kNeedsNothing, false,
     "rank R's loss becomes NaN at step S", "the NaN guard: exit 3 naming the rank"},
    {FaultKind::kSyncBn, "syncbn", kAt, kDdp | kZero, kNeedsSyncBn | kNeedsReference, true,
     "rank R normalises with its local statistics from step S on (it still joins every "
     "collective)",
     "the parameters and buffers checks, exit 1"},
    {FaultKind::kBuffers, "buffers", kAt, kDdp, kNeedsBufferBroadcast | kNeedsRankAboveZero, true,
     "rank R keeps its own buffers instead of rank 0's broadcast from step S on",
     "the ranks_buffers_equal check, exit 1"},
    {FaultKind::kDpBuffers, "dpbuffers", kFaultStep, kDp, kNeedsReference, true,
     "from step S on the master keeps the mean of the replicas' buffers instead of replica 0's",
     "the buffers check, exit 1"},
    {FaultKind::kNoScale, "noscale", kFaultStep, kDp | kDdp | kZero,
     kNeedsAccumulation | kNeedsReference, true,
     "at step S every process forgets to scale the micro-step losses by 1/A (the classic "
     "accumulation bug)",
     "the gradients check, exit 1"},
    {FaultKind::kEval, "eval", kFaultRank, kDp | kDdp, kNeedsNothing, true,
     "ddp rank R leaves its last evaluated sample out of the evaluation pass's allreduce (dp: the "
     "last gathered sample)",
     "the evaluation check, exit 1"},
    {FaultKind::kJoin, "join", kAt, kDdp | kZero, kNeedsReference, true,
     "rank R, out of batches at step S (uneven data, PyTorch's Join), contributes its last "
     "batch's gradient instead of zeros",
     "the gradients check, exit 1"},
    {FaultKind::kScaler, "scaler", kAt, kDdp, kNeedsFp16Amp | kNeedsRankAboveZero, true,
     "rank R's GradScaler scale doubles at step S and stays apart from the other ranks' "
     "(pytorch/pytorch#90057)",
     "the ranks_scale_equal check, exit 1"},
    {FaultKind::kInf, "inf", kAt, kDdp | kZero, kNeedsFp16Amp | kNeedsReference, false,
     "an inf in rank R's gradient of the first parameter at step S, before the allreduce, which "
     "must make every rank skip the step",
     "the loss_scale check, exit 1, unless every rank skipped the step the references skip"},
    {FaultKind::kShard, "shard", kAt | kFaultEps, kZero, kNeedsReference, true,
     "after rank R's optimizer step at step S, the first parameter it owns is scaled by 1+eps "
     "before its broadcast",
     "the parameters check, exit 1"},
    {FaultKind::kOwner, "owner", kAt, kZero, kNeedsReference, true,
     "at step S rank R does not step the first parameter it owns (a wrong owner in its "
     "partition)",
     "the updates and parameters checks, exit 1"},
    {FaultKind::kGather, "gather", kAt, kZero, kNeedsNothing, true,
     "at step S rank R misses the broadcasts of the parameters it does not own and keeps their "
     "old values",
     "the ranks_bitwise_equal check, exit 1"},
    {FaultKind::kState, "state", kAt | kFaultEps, kZero, kNeedsLockstep | kNeedsReference, true,
     "after rank R's optimizer step at step S, its optimizer state of the first parameter it owns "
     "(stage 3: holds rows of) is scaled by 1+eps, as a wrong or stale state shard would be",
     "the lockstep comparison's optimizer_state check, exit 1"},
    {FaultKind::kSlow, "slow", kFaultRank | kFaultMs, kDdp | kZero, kNeedsPerfPhase, false,
     "rank R computes M more milliseconds (a busy wait) in the forward of every timed step, as a "
     "slower rank would: every rank waits for it in the step's collectives (a straggler)",
     "not a check (the checks still pass): the performance gate, `gate` calls the point slower"},
    // Why a second slow kind: a busy wait on one rank hides behind the other ranks' waits (idle
    // here, slow:rank=0 left toy_cnn's step 5% faster), so it cannot say how much slower a build
    // is. A wait on every rank lengthens every rank's step by M: the slowdown a gate's power is
    // measured against (reports/METRICS.md, "Both gates under a changing load").
    {FaultKind::kSlowAll, "slowall", kFaultMs, kDdp | kZero, kNeedsPerfPhase, false,
     "every rank computes M more milliseconds (a busy wait) in the forward of every timed step, "
     "as a slower build would: each step is about M ms longer on every rank",
     "not a check (the checks still pass): the performance gate, `gate` and `ab` call the point "
     "slower"},
    {FaultKind::kDesync, "desync", kAt, kDdp | kZero, kNeedsOwnCommunicator | kNeedsPeers, true,
     "rank R skips its first gradient allreduce or reduce-scatter from step S on (a collective "
     "its peers issue), so its later collectives pair with the wrong ones",
     "the flight recorder's analysis names the first disagreeing collective, exit 3; "
     "--debug-collectives stops it before any rank reduces it"},
    {FaultKind::kShape, "shape", kAt, kDdp | kZero, kNeedsOwnCommunicator | kNeedsPeers, true,
     "rank R's first allreduce or reduce-scatter from step S on is shorter than its peers' (a "
     "bucket of another length)",
     "the flight recorder's analysis names the first disagreeing collective, exit 3; "
     "--debug-collectives stops it before any rank reduces it"},
    {FaultKind::kDivide, "divide", kFaultStep, kZero, kNeedsReplicas | kNeedsReference, true,
     "at step S every HSDP rank averages its gradients over its shard group's S ranks instead of "
     "all K (the divide-factor bug of pytorch/pytorch#155903)",
     "the gradients check, exit 1"},
    {FaultKind::kReplica, "replica", kFaultStep, kZero, kNeedsReplicas, true,
     "at step S every HSDP rank skips the all-reduce over its replicas, so each replica steps its "
     "own shard group's average",
     "the gradients and ranks_bitwise_equal checks, exit 1"},
    {FaultKind::kBucket, "bucket", kFaultStep, kDdp, kNeedsPeers, true,
     "at step S every ddp rank skips the allreduce of its last gradient bucket (the naive "
     "engine: of its last parameter; c10d's: through a comm hook), so those gradients stay each "
     "rank's own",
     "the gradients, ranks_bitwise_equal and collectives checks, exit 1"},
    {FaultKind::kDecay, "decay", kAt, kDdp | kZero, kNeedsNoDecayGroup | kNeedsReference, true,
     "at step S rank R's optimizer applies the scenario's weight decay to the no-decay group too "
     "(biases, norms: a parameter group built wrong)",
     "ddp: the ranks_bitwise_equal check; zero: the updates check (free-running: parameters); "
     "exit 1, naming a no-decay tensor and the step"},
    {FaultKind::kSched, "sched", kAt, kDdp | kZero, kNeedsSchedule | kNeedsReference, true,
     "at step S rank R's optimizer steps with step S+1's learning rate (its schedule one step "
     "ahead: a scheduler stepped per micro-step, or once too often)",
     "ddp: the ranks_bitwise_equal check; zero: the updates check (free-running: parameters); "
     "exit 1, naming the step"},
    // Why every rank: a reducer that does not deduplicate a tensor registered under two names
    // (libtorch's parameters() lists it twice) does so on every rank alike, so the ranks stay
    // equal and only a reference sees it. Injected as the slot doubled before its one allreduce:
    // the same sum two reductions of it accumulated into the gradient make.
    {FaultKind::kTied, "tied", kFaultStep, kDdp, kNeedsTiedParameter | kNeedsReference, true,
     "at step S every ddp rank reduces the tied parameter's gradient (gpt_tiny: wte.weight, also "
     "the output projection) once per use and accumulates both, as a reducer over a parameter "
     "list holding it twice would: it arrives doubled",
     "the gradients check, exit 1, naming the tied tensor and the step"},
}};

constexpr bool rows_follow_the_enum() {
  for (size_t i = 0; i < kFaultKinds; ++i) {
    if (kRows[i].kind != static_cast<FaultKind>(i) || kRows[i].name == nullptr) return false;
  }
  return true;
}
static_assert(rows_follow_the_enum(),
              "every FaultKind needs its row in kRows, in the enum's order");

std::string needs_text(unsigned needs) {
  std::vector<std::string> parts;
  if (needs & kNeedsFp16Amp) parts.push_back("--amp fp16");
  if (needs & kNeedsAccumulation) parts.push_back("--accumulation-steps 2+");
  if (needs & kNeedsSyncBn) parts.push_back("SyncBN");
  if (needs & kNeedsLockstep) parts.push_back("lockstep");
  if (needs & kNeedsBufferBroadcast) parts.push_back("the buffer broadcast");
  if (needs & kNeedsRankAboveZero) parts.push_back("rank >= 1");
  if (needs & kNeedsPerfPhase) parts.push_back("a perf phase");
  if (needs & kNeedsOwnCommunicator) parts.push_back("ddpbench's communicator (not c10d's)");
  if (needs & kNeedsPeers) parts.push_back("2+ ranks");
  if (needs & kNeedsReplicas) parts.push_back("--shard-group below the world size");
  if (needs & kNeedsReference) parts.push_back("a reference in --modes");
  if (needs & kNeedsNoDecayGroup) parts.push_back("OPTIM.NO_DECAY and OPTIM.WEIGHT_DECAY > 0");
  if (needs & kNeedsSchedule) parts.push_back("a SCHED.NAME that changes the rate at step S");
  if (needs & kNeedsTiedParameter) parts.push_back("a model with a tied parameter (gpt_tiny)");
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

const std::array<FaultRow, kFaultKinds>& fault_rows() { return kRows; }

const FaultRow& fault_row(FaultKind kind) {
  const auto i = static_cast<size_t>(kind);
  if (i >= kFaultKinds) throw std::logic_error("fault_row: kFaultKindCount is not a fault kind");
  return kRows[i];
}

bool has_reference_for(const FaultRow& row, unsigned run_modes) {
  if (run_modes & kSingle) return true;
  // matches_ddp judges zero against ddp, which a kind going into zero alone leaves clean.
  return row.modes == kZero && (run_modes & kDdp) != 0;
}

const FaultRow* find_fault_row(const std::string& name) {
  for (const FaultRow& row : kRows) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

std::string fault_syntax(const FaultRow& row) {
  std::vector<std::string> fields;
  if (row.fields & kFaultRank) fields.push_back("rank=R");
  if (row.fields & kFaultStep) fields.push_back("step=S");
  if (row.fields & kFaultMs) fields.push_back("ms=M");
  std::string text = fmt::format("{}:{}", row.name, fmt::join(fields, ","));
  if (row.fields & kFaultEps) text += "[,eps=E]";
  if (row.fields & kFaultTensor) text += "[,tensor=NAME]";
  return text;
}

std::string fault_text(const FaultSpec& f) {
  const FaultRow& row = fault_row(f.kind);
  std::vector<std::string> fields;
  if (row.fields & kFaultRank) fields.push_back(fmt::format("rank={}", f.rank));
  if (row.fields & kFaultStep) fields.push_back(fmt::format("step={}", f.step));
  if (row.fields & kFaultMs) fields.push_back(fmt::format("ms={:g}", f.ms));
  if (row.fields & kFaultEps) fields.push_back(fmt::format("eps={:g}", f.eps));
  if ((row.fields & kFaultTensor) && !f.tensor.empty()) fields.push_back("tensor=" + f.tensor);
  return fmt::format("{}:{}", row.name, fmt::join(fields, ","));
}

std::string fault_modes_text(const FaultRow& row) {
  std::vector<std::string> names;
  for (ModeKind m : {ModeKind::kSingle, ModeKind::kDp, ModeKind::kDdp, ModeKind::kZero}) {
    if (row.modes & mode_bit(m)) names.push_back(mode_name(m));
  }
  if (names.size() < 2) return names.empty() ? "" : names[0];
  const std::string last = names.back();
  names.pop_back();
  return fmt::format("{} or {}", fmt::join(names, ", "), last);
}

std::string fault_kind_names() {
  std::vector<std::string> names;
  for (const FaultRow& row : kRows) names.emplace_back(row.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string fault_usage() {
  std::vector<std::string> kinds;
  for (const FaultRow& row : kRows) {
    const std::string needs = needs_text(row.needs & ~kNeedsRankAboveZero);
    // The kinds that take just rank and step go by their name; the others show their fields.
    kinds.push_back(fmt::format("{} ({}{}{})", row.fields == kAt ? row.name : fault_syntax(row),
                                fault_modes_text(row), needs.empty() ? "" : "; ", needs));
  }
  return fmt::format("KIND:rank=R,step=S, KIND one of {}", fmt::join(kinds, ", "));
}

std::string fault_table_markdown() {
  std::string text =
      "| fault | modes | needs | what it does | caught by |\n|---|---|---|---|---|\n";
  for (const FaultRow& row : kRows) {
    const std::string needs = needs_text(row.needs);
    text +=
        fmt::format("| `{}` | {} | {} | {} | {}{} |\n", fault_syntax(row), fault_modes_text(row),
                    needs.empty() ? "-" : needs, row.effect, row.detected,
                    row.must_be_caught ? "; a run where nothing caught it FAILs" : "");
  }
  return text;
}

}  // namespace ddpbench::modes
