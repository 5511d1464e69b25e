// trace_diff.h — `ddpbench diff`'s judgement of two traces of one experiment (trace_file.h): it
// refuses traces of different experiments (InputError naming the field), lists the environment
// side by side, walks both traces in computation order and classes every tensor (Note [Classing
// a difference]), names the first difference and the first divergence with what the trace can
// tell of their cause, and sums the spread per step.
//
// Note [Classing a difference]: a tensor is `identical` when its bytes are; else its normalized
// error is max |a - b| over max(max |a|, max |b|, level / limit) (for fingerprints, the worst of
// their four entries, as the gradient checks judge them: compare::normalized_gradient_error in
// both directions), where level is kRoundingUlps x eps(dtype) x the largest value of the same
// phase of the same step (Note [Gradients at rounding level]; an update's elements first lose 2
// ulps of |parameter|, the rounding of p + update) and limit is the scenario's gradient tolerance
// for the run's dtype (float32 2e-5, float64 1e-11 by default): the limit the run's checks hold a
// data-parallel mode to for what rounding explains. Within it the class is `rounding`, beyond it
// `diverged`. The class is the size of the difference; its cause is where it appeared: at an
// operation whose inputs were identical in both traces (a kernel, the reduction, the optimizer), or
// after an earlier difference that it follows from.
#pragma once

#include "reports/diff_record.h"
#include "trace/trace_file.h"

namespace ddpbench::trace {

struct DiffOptions {
  bool expect_identical = false;  // --expect identical: any difference fails
};

reports::DiffRecord diff_traces(const TraceFile& a, const TraceFile& b, const DiffOptions& options);

// The experiment field a diff is held to: the rounding limit of Note [Classing a difference].
inline constexpr const char* kRoundingLimitField = "rounding_limit";

}  // namespace ddpbench::trace
