// ddp_agreement.h — the zero mode judged against ddp itself, in the same run (issue 35). Both
// trained the same plan from the same start (free-running), or each step from the same reference
// state (lockstep), so the loss of every step, every recorded gradient and the final parameters
// and buffers of the two can be compared item by item: check `matches_ddp` on zero's result.
// Where sharding does not change the arithmetic the check is bit for bit; where it does, each
// item's scale-free error (max |zero - ddp| / max |ddp|, gradients with the rounding floor of
// Note [Gradients at rounding level]) is bounded by the run's gradient tolerance. Which of the two
// applies, and why, is the run's tolerance model (training/comparison_policy.h).
#pragma once

#include <string>

#include "compare/mode_comparison.h"

namespace ddpbench::compare {

struct AgreementRule {
  bool bitwise = false;
  double limit = 0.0;                  // not bitwise: the bound on every item's scale-free error
  bool gradient_fingerprints = false;  // the traces hold [4] fingerprints, not gradients
  std::string why;                     // the tolerance model in words (the check's detail)
};

// One check, Stage::kMatchesDdp, and its first failing item (stage kNone when it passes). With
// `floors` (the exact reference's, which both modes round around), an item beyond a normalized
// rule's limit is held to its measured floor's (Note [Rounding floor measured on the model]); a
// bit-for-bit rule has no floor.
ModeComparison ddp_agreement(const ModeTrace& ddp, const ModeTrace& zero, const AgreementRule& rule,
                             const MeasuredFloors* floors = nullptr);

}  // namespace ddpbench::compare
