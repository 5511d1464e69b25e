// reduce_scatter_blocks.cpp — see reduce_scatter_blocks.h.
#include "comm/reduce_scatter_blocks.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <stdexcept>

namespace ddpbench::comm {

int64_t reduce_scatter_block(const at::Tensor& input, int world_size, const char* backend) {
  const int64_t n = input.numel();
  if (n % world_size != 0) {
    throw std::invalid_argument(
        fmt::format("{} reduce_scatter_sum: {} elements do not split into {} equal blocks", backend,
                    n, world_size));
  }
  return n / world_size;
}

at::Tensor reduce_scatter_by_allreduce(Communicator& comm, const at::Tensor& input,
                                       const char* backend) {
  const int64_t block = reduce_scatter_block(input, comm.world_size(), backend);
  at::Tensor all = input.flatten().clone();
  allreduce_sum_blocking(comm, all);
  return all.narrow(0, comm.rank() * block, block).clone();
}

}  // namespace ddpbench::comm
