// reduction_check.h — whether a traced reduced gradient is what its mode's reduction can make of
// the local gradients its ranks gave it (Note [A reduction judged by its own contributions]):
// `ddpbench diff` holds each trace's reduced gradients to it, so that "rounding" there is a
// measurement on that tensor and step, never a tolerance.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::trace {

// Note [A reduction judged by its own contributions]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A data-parallel mode's reduced gradient is sum_r c_r / D over its ranks' local gradients c_r
// (D: the world size for ddp and zero), taken in some summation order, with the division before
// or after the sum, and under a compression hook in the wire dtype. A trace holds every rank's
// c_r (modes/common/step_trace.h), so diff computes that reduction in every order it can take:
//   - up to 4 ranks, every summation tree (3 for 3 ranks, 15 for 4: any ring, tree, recursive
//     halving or rank-order loop sums each element by one of them), each with the division
//     before and after the sum and, under a compression hook, the cast before and after the
//     division;
//   - beyond 4 ranks, the rank order, its reverse, its rotations (a ring's chunks) and the
//     pairwise trees over the rank order and over its bit-reversed order.
// The reduction is valid when every element lies within the range those results span ([min,
// max] per element): exactly up to 4 ranks, and beyond them within the range's own width on
// either side (an algorithm may take an order the list misses). That range is the rounding a
// reordering of the same sums actually produces on that tensor at that step, element by
// element: a measurement, not a tolerance. With 2 ranks every order gives the same bytes (a sum
// of two has one rounding) and the range is a point, so nothing can be blamed on "the
// summation order". A reduced gradient outside its range was not made from those contributions
// by any sum: a fault scaled one of them after its rank's hook saw it, a bucket went unreduced,
// a divisor was wrong. Fingerprinted traces keep [sum, L1, L2, max |x|] only: the sum is linear,
// so the reduced gradient's sum must lie within what any order reaches, twice over:
// 2 ((W - 1) u sum_r L1(c_r) / D + u L1(R)), u the wire dtype's unit roundoff; the other
// entries are not judged.
struct ReductionInputs {
  std::vector<at::Tensor> contributions;  // every rank's local gradient, in rank order
  at::Tensor reduced;                     // what the mode's optimizer applied
  int64_t divisor = 1;
  at::ScalarType wire = at::kFloat;  // the dtype the sum is taken in
  bool fingerprint = false;          // the tensors are [4] fingerprints
};

struct ReductionCheck {
  bool measured = false;  // false: the contributions do not fit the reduced gradient
  bool valid = false;     // every element within the range of the orders
  int64_t orders = 0;     // the summation orders computed
  // Per element, in ulps of the reduced dtype at the element's magnitude, the largest: how far
  // the reduced gradient lies outside the range (0 when valid), the range's width, and its
  // distance from the exact sum (float64). Fingerprints: the sum's, over the bound (<= 1 valid).
  double outside_ulps = 0;
  double range_ulps = 0;
  double exact_ulps = 0;
  // The same, normalized by the reduced gradient's largest |value|.
  double outside = 0;
  double range = 0;
  std::string how;  // what was computed, for diff.json
};

ReductionCheck check_reduction(const ReductionInputs& in);

}  // namespace ddpbench::trace
