// collective_check.h — `ddpbench comm`'s #wrong column: inputs unique per rank and element whose
// every result is exact in the benchmark's dtype, and the count of result elements that differ
// from the closed-form expectation. Run outside the timed loop (nccl-tests' check pass).
//
// Rank r's element i holds (i mod L) * n + r for a world of n: unique per (rank, element) within
// every window of L elements, where L is the largest power of two with n * n * L within the
// dtype's exact integers (2^24 for float32: L = 2^22 elements = 16 MiB at n = 2), so every partial
// and final sum is an exact integer whatever order a backend adds in, and the check demands
// equality. A misplaced, dropped, doubled or unwritten element is counted; one moved by an exact
// multiple of L elements is not.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "comm/collective.h"

namespace ddpbench::comm {

// L above: the period of the input pattern for `world` ranks in `dtype` (float32 or float64).
int64_t check_period(int world, at::ScalarType dtype);

// Rank `rank`'s input for one call of `c` with `count` elements per rank (input_elements long).
at::Tensor check_input(Collective c, int rank, int world, int64_t count, at::ScalarType dtype);

// The elements of `result` (run_collective's parts, concatenated) on rank `rank` that differ from
// what `c` must produce from every rank's check_input; a result of the wrong length counts every
// expected element as wrong.
int64_t count_wrong(Collective c, const std::vector<at::Tensor>& result, int rank, int world,
                    int64_t count);

}  // namespace ddpbench::comm
