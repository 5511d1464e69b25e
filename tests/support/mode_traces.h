// mode_traces.h — hand-made compare::ModeTrace helpers for the comparison unit tests: a copy that
// owns its tensors, so that perturbing the copy leaves the reference as it was.
#pragma once

#include "compare/mode_comparison.h"

namespace ddpbench::test {

inline compare::ModeTrace deep_copy(const compare::ModeTrace& t) {
  compare::ModeTrace c = t;
  for (auto& step : c.gradients) {
    for (auto& g : step) g = g.defined() ? g.clone() : g;  // a gradient absent stays absent
  }
  for (auto& [n, v] : c.final_state) v = v.clone();
  return c;
}

}  // namespace ddpbench::test
