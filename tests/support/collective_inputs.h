// collective_inputs.h — inputs for collective tests whose results are exact in their dtype, so a
// check can demand equality whatever order a backend adds in. Element j of rank r holds
// j * world + r (+ offset): unique per (rank, element), as gloo's tests build them, so misplaced
// or dropped data cannot sum to the closed form.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>

namespace ddpbench::testing {

// Rank `rank`'s contribution: element j holds j * world + rank + offset.
inline at::Tensor rank_input(int64_t n, int rank, int world, at::ScalarType dtype,
                             int64_t offset = 0) {
  return (at::arange(n, at::kLong) * world + rank + offset).to(dtype);
}

// Closed form of the sum over ranks of rank_input: world * (j * world + offset) + world(world-1)/2.
inline at::Tensor expected_sum(int64_t n, int world, at::ScalarType dtype, int64_t offset = 0) {
  const int64_t ranks_sum = static_cast<int64_t>(world) * (world - 1) / 2;
  return ((at::arange(n, at::kLong) * world + offset) * world + ranks_sum).to(dtype);
}

// Largest n such that every partial and final sum of rank_input stays an exactly representable
// integer: max sum = world * ((n-1) * world) + world(world-1)/2 <= limit. Capped at `cap`.
inline int64_t exact_length(int world, int64_t limit, int64_t cap) {
  const int64_t ranks_sum = static_cast<int64_t>(world) * (world - 1) / 2;
  const int64_t n = (limit - ranks_sum) / (static_cast<int64_t>(world) * world) + 1;
  return std::max<int64_t>(1, std::min(n, cap));
}

// The largest integer up to which every integer is exact in `dtype` (2^24 for float32, ...).
inline int64_t exact_integer_limit(at::ScalarType dtype) {
  switch (dtype) {
    case at::kHalf:
      return 2048;
    case at::kBFloat16:
      return 256;
    case at::kFloat:
      return int64_t{1} << 24;
    default:
      return int64_t{1} << 52;
  }
}

}  // namespace ddpbench::testing
