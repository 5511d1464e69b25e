// phase_times_tensor.h — per-step phase times as a [steps, 6] float64 tensor (data, forward,
// backward, comm_wait, optimizer, total) and back: the form they take to cross process
// boundaries (allgather between ranks, the result sent to the launching parent).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "metrics/step_statistics.h"

namespace ddpbench::metrics {

at::Tensor phase_times_to_tensor(const std::vector<PhaseTimes>& times);
std::vector<PhaseTimes> phase_times_from_tensor(const at::Tensor& rows);

}  // namespace ddpbench::metrics
