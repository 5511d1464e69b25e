// gloo_reduce_scatter.h — a reduce-scatter for gloo, which has none in libtorch 1.13
// (ProcessGroupGloo throws "does not support reduce_scatter"), built from its point-to-point
// sends: each rank sends block j of its input to rank j and sums the world - 1 blocks it receives
// into its own. Every rank sends (world - 1) / world of the input, what a ring reduce-scatter
// sends and half what the allreduce it replaces sent (ZeRO stage 2 reduce-scatters every gradient
// bucket: METRICS.md "A reduce-scatter of its own on gloo" has the step it saves). All sends and
// receives are posted at once and move on gloo's transport thread; the sum is done in wait(), in
// rank order, so a block's sum is the same on every run.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <cstdint>

#include "comm/communicator.h"

namespace ddpbench::comm {

// Starts the reduce-scatter of `input` (contiguous, numel a multiple of the world size: checked by
// the caller) over `group`. `tag` must be the same on every rank for this call and differ from
// every reduce-scatter still in flight. `in_place`: the block is a view of `input` (or a received
// buffer), summed at wait() without a copy, and the input is spent; otherwise the input is only
// read and the block is a tensor of its own.
ScatterWork gloo_reduce_scatter_async(c10d::ProcessGroupGloo& group, int rank, int world_size,
                                      const at::Tensor& input, int tag, bool in_place);

}  // namespace ddpbench::comm
