// fault_injection.h — `--inject-fault KIND:rank=R,step=S[,eps=E][,tensor=NAME]`: deliberate
// faults that prove the harness can say FAIL. What each kind does, the fields it takes, the modes
// and options it needs and what catches it are its row in fault_table.h (one row per FaultKind);
// the code that injects a kind lives with the mode it goes into (the step loop, modes/ddp,
// modes/zero/zero_path.h, training/evaluation.h). Here: the parsed fault and the questions the
// injection sites ask of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ddpbench::modes {

enum class FaultKind {
  kGrad,
  kCrash,
  kHang,
  kNan,
  kSyncBn,
  kBuffers,
  kDpBuffers,
  kNoScale,
  kEval,
  kJoin,
  kScaler,
  kInf,
  kShard,
  kOwner,
  kGather,
  kState,
  kSlow,
  kSlowAll,
  kDesync,
  kShape,
  kDivide,
  kReplica,
  kBucket,
  kDecay,
  kSched,
  kTied,
  kFaultKindCount,  // not a kind: the number of them, so that a kind added above needs a row
};

struct FaultSpec {
  FaultKind kind = FaultKind::kGrad;
  int64_t rank = 0;
  int64_t step = 0;
  double eps = 1e-3;
  std::string tensor;  // grad: parameter name; empty = the first parameter
  double ms = 0;       // slow, slowall: milliseconds added to each timed step
};

// Throws InputError with the expected syntax for anything malformed.
FaultSpec parse_fault(const std::string& text);
const char* fault_name(FaultKind kind);

// Whether `fault` of `kind` is active on this rank at this step, for faults that last from their
// step on (syncbn, buffers, dpbuffers).
inline bool fault_active(const std::optional<FaultSpec>& fault, FaultKind kind, int64_t rank,
                         int64_t step) {
  return fault && fault->kind == kind && fault->rank == rank && step >= fault->step;
}

// Whether `fault` is of `kind` and aimed at this rank, whatever its step (faults the path arms
// once, before training: scaler, inf).
inline bool fault_on_rank(const std::optional<FaultSpec>& fault, FaultKind kind, int64_t rank) {
  return fault && fault->kind == kind && fault->rank == rank;
}

// Whether the fault acts on the timed perf phase (slow: a slower rank; slowall: a slower build)
// rather than on the checked steps: the kinds a --perf-only repeat (run/perf_repeats.h) keeps.
inline bool acts_on_timed_steps(const FaultSpec& fault) {
  return fault.kind == FaultKind::kSlow || fault.kind == FaultKind::kSlowAll;
}

// Whether a fault that acts on every rank (no rank= field: noscale, divide, replica) fires at
// this step.
inline bool fault_fires_everywhere(const std::optional<FaultSpec>& fault, FaultKind kind,
                                   int64_t step) {
  return fault && fault->kind == kind && fault->step == step;
}

// Whether `fault` fires on this rank at this step.
inline bool fault_fires(const std::optional<FaultSpec>& fault, FaultKind kind, int64_t rank,
                        int64_t step) {
  return fault_on_rank(fault, kind, rank) && fault->step == step;
}

}  // namespace ddpbench::modes
