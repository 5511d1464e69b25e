// micro_batches.h — gradient accumulation's split of a step's samples (PyTorch's recipe: A
// micro-batches through forward and backward, each loss scaled by 1/A, one optimizer step). Each
// shard a mode loads (the global batch, a replica's chunk, a rank's slice) is cut into A
// contiguous, equal micro-batches, so micro-step m of DP replica r and of DDP rank r hold the same
// samples. Equal sizes are what make the scaled sum of micro-batch means the mean of the whole
// batch; a shard that does not split evenly is refused rather than silently weighted wrong.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::modes {

// `samples` cut into `micro_steps` contiguous pieces of equal size, in order. Throws
// WorkerFailure naming `who` and `step` when the count does not divide.
std::vector<std::vector<int64_t>> split_micro_batches(const std::vector<int64_t>& samples,
                                                      int64_t micro_steps, const std::string& who,
                                                      int64_t step);

}  // namespace ddpbench::modes
