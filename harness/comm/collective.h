// collective.h — the four collectives `ddpbench comm` measures, as values: their names, one call
// of each through a Communicator, and nccl-tests' bus-bandwidth factors (reports/METRICS.md).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.h"

namespace ddpbench::comm {

enum class Collective { kAllreduce, kBroadcast, kAllgather, kReduceScatter };

// In the order `ddpbench comm` runs them.
const std::vector<Collective>& all_collectives();
const char* collective_name(Collective c);
std::optional<Collective> parse_collective(std::string_view name);
// "allreduce, broadcast, allgather, reduce_scatter".
std::string collective_names();

// nccl-tests' factor from algorithm bandwidth to bus bandwidth for `world` ranks: what each rank's
// link must carry per byte of `size`, so that busbw is comparable across world sizes and with the
// hardware's peak. allreduce 2(n-1)/n, allgather and reduce_scatter (n-1)/n, broadcast 1.
double bus_factor(Collective c, int world);

// Elements in each rank's buffer, nccl-tests' convention: allreduce and broadcast move `size`
// bytes per rank; allgather's size is the whole output and reduce_scatter's the whole input, so
// their per-rank count is size / element / world. Rounded down; 0 when `size` is too small.
int64_t count_per_rank(Collective c, int64_t size_bytes, int64_t element_size, int world);
// The bytes a row reports for `count` elements per rank (size rounded to what is moved).
int64_t size_of(Collective c, int64_t count, int64_t element_size, int world);
// Elements of the input each rank passes (allgather: count; reduce_scatter: world * count).
int64_t input_elements(Collective c, int64_t count, int world);

// One call of `c` on this rank's `input` (input_elements long), blocking; returns the result as
// the communicator hands it over, without a copy: allreduce and broadcast (from rank 0) in place
// (the input), allgather's blocks in rank order, reduce_scatter's block of this rank.
std::vector<at::Tensor> run_collective(Communicator& comm, Collective c, const at::Tensor& input);

}  // namespace ddpbench::comm
