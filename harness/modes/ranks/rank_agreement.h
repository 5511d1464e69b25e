// rank_agreement.h — what every one-process-per-rank mode (ddp, zero) checks and reports across
// its ranks: the global loss of a checked step, whether every rank holds the same parameters bit
// for bit after it (64-bit digests, one allgather, no copies of the state), and a step's phase
// times as its slowest rank took them.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "metrics/step_statistics.h"

namespace torch::nn {
class Module;
}

namespace ddpbench::modes::ranks {

// The first checked step after which some rank's tensor differed from rank 0's.
struct RankDisagreement {
  int64_t step = -1;  // -1: the ranks always agreed
  int64_t rank = -1;
  std::string tensor;
};

// 64-bit digest of a tensor's bytes (read on the host).
uint64_t digest_bytes(const at::Tensor& t);

// One digest per parameter, in registration order. Buffers are left out on purpose: under DDP
// each rank updates its BatchNorm statistics locally and they only agree again after the next
// forward's broadcast (PyTorch behaves the same). Names go to `names` when it is not null.
at::Tensor state_digests(const torch::nn::Module& module, std::vector<std::string>* names);

// Collective: the sample-weighted mean of every rank's mean loss over its `samples` samples.
double global_mean_loss(comm::Communicator& comm, double local_loss, int64_t samples);

// Collective: records in `first` (when it is still unset) the lowest rank whose digests differ
// from rank 0's after `step`, and the first differing entry of `names`.
void note_disagreement(comm::Communicator& comm, const at::Tensor& digests,
                       const std::vector<std::string>& names, int64_t step,
                       RankDisagreement& first);

// Every rank's per-step phase times, in rank order. Collective: every rank calls it, also with no
// steps (then every rank's list comes back empty).
std::vector<std::vector<metrics::PhaseTimes>> every_rank_times(
    comm::Communicator& comm, const std::vector<metrics::PhaseTimes>& times);

// Collective: every rank's `tensors` (host tensors of the same shapes and dtypes on every rank,
// undefined ones undefined on every rank), in rank order: --trace's local gradients
// (GradientPath::every_rank_gradients). One allgather of their values in float64, which holds
// float32, bfloat16 and float16 values exactly.
std::vector<std::vector<at::Tensor>> every_rank_tensors(comm::Communicator& comm,
                                                        const std::vector<at::Tensor>& tensors);

// Per-step phase times, max over ranks (a step is as slow as its slowest rank).
std::vector<metrics::PhaseTimes> slowest_of(
    const std::vector<std::vector<metrics::PhaseTimes>>& by_rank);

}  // namespace ddpbench::modes::ranks
