// mode_diff.h — one mode's entries of two traces walked side by side in computation order, each
// tensor classed where it is made (Note [Classing a difference], trace_diff.h): identical; at an
// operation whose inputs were identical in both, rounding or diverged by what its rounding is
// (a reduction's measured on its own ranks' gradients, Note [A reduction judged by its own
// contributions]; a kernel's and the optimizer's by the scenario's gradient tolerance); after
// an earlier difference, growth from it (or a divergence that follows from a divergence). The
// counts, the spread per step, the step x tensor map and the first difference and divergence go
// into the record.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "reports/diff/diff_record.h"
#include "trace/trace_file.h"

namespace ddpbench::trace {

struct DiffContext {
  double limit = 0;                 // the scenario's gradient tolerance for the run's dtype
  at::ScalarType run = at::kFloat;  // the run's dtype
  std::string world;                // the world size, for the causes' text
};

void diff_mode(const ModeEntries& a, const ModeEntries& b, const DiffContext& context,
               reports::DiffRecord& record);

}  // namespace ddpbench::trace
