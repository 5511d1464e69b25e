// judged_checks.h — check records whose numbers give the status a test asks for (reports/run/verdict.h
// recomputes every status from the numbers, so a hand-made record must carry consistent ones),
// and a report's verdict set the way a run sets it.
#pragma once

#include <cstdint>

#include "reports/run/run_record.h"
#include "reports/run/verdict.h"

namespace ddpbench::test {

// A kTolerance check (atol 1e-5, rtol 1.3e-6) over `items` items, with numbers that give `status`:
// every item within (pass), one item outside (fail), one declared divergent (expected divergence).
// A per-step check compared at steps 0 and 1 (the two steps of a report's usual hand-made run),
// so that its mode is judged at every step (Note [What a mode was judged against]).
inline reports::CheckRecord judged_check(reports::Stage name, reports::CheckStatus status,
                                         int64_t items = 6) {
  reports::CheckRecord c;
  c.name = name;
  c.measure = reports::Measure::kTolerance;
  c.atol = 1e-5;
  c.rtol = 1.3e-6;
  c.limit = 1.0;
  c.items = items;
  c.ref_max_abs = 1.0;
  c.tensor = "w";
  c.step = 1;
  c.error = 0.5;
  c.max_abs_diff = 5e-6;
  c.max_rel_diff = 5e-6;
  if (status == reports::CheckStatus::kFail) {
    c.outside = 1;
    c.error = 3.0;
    c.max_abs_diff = 3.4e-5;
  } else if (status == reports::CheckStatus::kExpectedDivergence) {
    c.divergent = 1;
    c.max_abs_diff = 3.4e-5;
    c.detail = "BatchNorm statistics are per rank";
  }
  if (reports::spec_of(name).per_step) c.steps_compared = {0, 1};
  c.status = status;
  return c;
}

// The verdict a run writes: reports::run_verdict of the checks.
inline reports::RunReport with_verdict(reports::RunReport r) {
  r.verdict = reports::run_verdict(r);
  return r;
}

}  // namespace ddpbench::test
