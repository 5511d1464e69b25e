// trace_diff.h — `ddpbench diff`'s judgement of two traces of one experiment (trace_file.h): it
// refuses traces of different experiments (InputError naming the most specific field), lists the
// environment side by side, walks both traces in computation order and classes every tensor
// where it is made (Note [Classing a difference], trace/mode_diff.h), names the first difference
// and the first divergence with what the trace can tell of their cause, and sums the spread per
// step.
//
// Note [Classing a difference]: a tensor is `identical` when its bytes are. Otherwise what it is
// depends on where it was made. At an operation whose inputs were identical in both traces (the
// step started from the same state, by its digest, and nothing upstream of it in the step
// differed) it is held to that operation's rounding: a reduced gradient to the range every
// summation order of its own ranks' gradients spans, measured per element (Note [A reduction
// judged by its own contributions], reduction_check.h); a kernel's output, the loss, a local
// gradient, an optimizer's update or state, a buffer to the scenario's gradient tolerance for the
// run's dtype (float32 2e-5, float64 1e-11 by default) on a normalized error max |a - b| over
// max(max |a|, max |b|, level / limit), level being kRoundingUlps x eps(dtype) x the largest value
// of the same phase of the same step (Note [Gradients at rounding level]; an update's elements
// first lose 2 ulps of |parameter|, the rounding of p + update). Within it the class is
// `rounding`, beyond it `diverged`. After an earlier difference that it follows from, it is
// `growth` when only rounding and growth lie upstream (free-running training amplifies rounding
// until the trajectories part; that is no divergence of the operation), `diverged` when a
// divergence does. A reduction is judged on its own contributions wherever it sits, so a fault
// there diverges even after the trajectories have parted.
#pragma once

#include "reports/diff/diff_record.h"
#include "trace/trace_file.h"

namespace ddpbench::trace {

struct DiffOptions {
  bool expect_identical = false;  // --expect identical: any difference fails
};

reports::DiffRecord diff_traces(const TraceFile& a, const TraceFile& b, const DiffOptions& options);

// The experiment field a diff is held to: the rounding limit of Note [Classing a difference].
inline constexpr const char* kRoundingLimitField = "rounding_limit";

}  // namespace ddpbench::trace
