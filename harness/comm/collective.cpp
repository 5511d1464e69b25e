// collective.cpp — see collective.h.
#include "comm/collective.h"

#include <ATen/ATen.h>

#include <stdexcept>

namespace ddpbench::comm {

const std::vector<Collective>& all_collectives() {
  static const std::vector<Collective> all = {Collective::kAllreduce, Collective::kBroadcast,
                                              Collective::kAllgather, Collective::kReduceScatter};
  return all;
}

const char* collective_name(Collective c) {
  switch (c) {
    case Collective::kAllreduce:
      return "allreduce";
    case Collective::kBroadcast:
      return "broadcast";
    case Collective::kAllgather:
      return "allgather";
    case Collective::kReduceScatter:
      return "reduce_scatter";
  }
  throw std::logic_error("collective_name: unknown collective");
}

std::optional<Collective> parse_collective(std::string_view name) {
  for (Collective c : all_collectives()) {
    if (name == collective_name(c)) return c;
  }
  return std::nullopt;
}

std::string collective_names() {
  std::string out;
  for (Collective c : all_collectives())
    out += (out.empty() ? "" : ", ") + std::string(collective_name(c));
  return out;
}

double bus_factor(Collective c, int world) {
  const double n = world;
  switch (c) {
    case Collective::kAllreduce:
      return 2 * (n - 1) / n;
    case Collective::kAllgather:
    case Collective::kReduceScatter:
      return (n - 1) / n;
    case Collective::kBroadcast:
      return 1;
  }
  throw std::logic_error("bus_factor: unknown collective");
}

int64_t count_per_rank(Collective c, int64_t size_bytes, int64_t element_size, int world) {
  const int64_t elements = size_bytes / element_size;
  const bool split = c == Collective::kAllgather || c == Collective::kReduceScatter;
  return split ? elements / world : elements;
}

int64_t size_of(Collective c, int64_t count, int64_t element_size, int world) {
  const bool split = c == Collective::kAllgather || c == Collective::kReduceScatter;
  return count * element_size * (split ? world : 1);
}

int64_t input_elements(Collective c, int64_t count, int world) {
  return c == Collective::kReduceScatter ? count * world : count;
}

std::vector<at::Tensor> run_collective(Communicator& comm, Collective c, const at::Tensor& input) {
  switch (c) {
    case Collective::kAllreduce:
      comm.allreduce_sum(input)->wait();
      return {input};
    case Collective::kBroadcast:
      comm.broadcast({input}, /*root=*/0);
      return {input};
    case Collective::kAllgather:
      return comm.allgather(input);
    case Collective::kReduceScatter:
      return {comm.reduce_scatter_sum(input)};
  }
  throw std::logic_error("run_collective: unknown collective");
}

}  // namespace ddpbench::comm
