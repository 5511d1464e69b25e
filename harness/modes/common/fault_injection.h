// fault_injection.h — `--inject-fault KIND:rank=R,step=S[,eps=E][,tensor=NAME]`: deliberate
// faults that prove the harness can say FAIL. DDP: grad: scale rank R's gradient of one tensor by
// (1+eps) before the allreduce; crash: rank R exits with an error at step S; hang: rank R stops
// responding at step S; nan: rank R's loss becomes NaN at step S; syncbn: rank R normalises with
// local statistics from step S on; buffers: rank R keeps its own buffers instead of rank 0's
// broadcast from step S on; join: rank R, which has run out of batches at step S (uneven rank
// batches, PyTorch's Join), contributes its last batch's gradient instead of zeros. DP: dpbuffers:
// from step S on the master keeps the mean of the replicas' buffers instead of replica 0's (a wrong
// buffer rule; rank is not used). DP and DDP with gradient accumulation: noscale:step=S: at step S
// every process forgets to scale the micro-step losses by 1/A (the classic accumulation bug; rank
// is not used). eval: DDP rank R leaves its last evaluated sample out of its contribution to the
// evaluation pass's allreduce, and DP leaves the last gathered sample out (training/evaluation.h;
// no step). scaler (--amp fp16, ddp): rank R's GradScaler scale doubles at step S and stays apart
// from the other ranks' (pytorch/pytorch#90057). inf (--amp fp16, ddp): an inf in rank R's gradient
// of the first parameter at step S, before the allreduce, which must make every rank skip the
// step (the references overflow at that step too, so the run passes only if every rank skipped).
// zero (modes/zero/zero_path.h) takes grad, crash, hang, nan and inf as DDP does, and four of its
// own: shard: after rank R's optimizer step at step S, the first parameter it owns is scaled by
// 1+eps before its broadcast; owner: at step S rank R does not step the first parameter it owns (a
// wrong owner in its partition); gather: at step S rank R misses the broadcasts of the parameters
// it does not own and keeps their old values; state: after rank R's optimizer step at step S, its
// optimizer state of the first parameter it owns (stage 3: holds rows of) is scaled by 1+eps, as
// a wrong or stale state shard would be (the lockstep comparison's optimizer_state check sees it;
// its updates cannot, since every step starts from the reference's state).
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
  kState
};

struct FaultSpec {
  FaultKind kind = FaultKind::kGrad;
  int64_t rank = 0;
  int64_t step = 0;
  double eps = 1e-3;
  std::string tensor;  // grad: parameter name; empty = the first parameter
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

// Whether `fault` fires on this rank at this step.
inline bool fault_fires(const std::optional<FaultSpec>& fault, FaultKind kind, int64_t rank,
                        int64_t step) {
  return fault_on_rank(fault, kind, rank) && fault->step == step;
}

}  // namespace ddpbench::modes
