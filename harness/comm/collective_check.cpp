// collective_check.cpp — see collective_check.h. Expected values are computed per element in
// int64 and compared with the result read as double: both are exact integers, so == is the test.
#include "comm/collective_check.h"

#include <ATen/ATen.h>

#include <stdexcept>

namespace ddpbench::comm {
namespace {

int64_t exact_integers(at::ScalarType dtype) {
  if (dtype == at::kFloat) return int64_t{1} << 24;
  if (dtype == at::kDouble) return int64_t{1} << 53;
  throw std::invalid_argument("collective check: float32 or float64 only");
}

// Rank r's value at global element i.
int64_t pattern_value(int64_t i, int r, int world, int64_t period) {
  return (i % period) * world + r;
}

// The sum over ranks of pattern_value at element i: n * n * (i mod L) + n (n - 1) / 2.
int64_t pattern_sum(int64_t i, int world, int64_t period) {
  const int64_t n = world;
  return n * n * (i % period) + n * (n - 1) / 2;
}

// What rank `rank` must hold at result element k.
int64_t expected_value(Collective c, int64_t k, int rank, int world, int64_t count,
                       int64_t period) {
  switch (c) {
    case Collective::kAllreduce:
      return pattern_sum(k, world, period);
    case Collective::kBroadcast:
      return pattern_value(k, /*root=*/0, world, period);
    case Collective::kAllgather:
      return pattern_value(k % count, static_cast<int>(k / count), world, period);
    case Collective::kReduceScatter:
      return pattern_sum(rank * count + k, world, period);
  }
  throw std::logic_error("expected_value: unknown collective");
}

int64_t result_elements(Collective c, int64_t count, int world) {
  return c == Collective::kAllgather ? count * world : count;
}

}  // namespace

int64_t check_period(int world, at::ScalarType dtype) {
  const int64_t room = exact_integers(dtype) / (static_cast<int64_t>(world) * world);
  int64_t period = 1;
  while (period * 2 <= room) period *= 2;
  return period;
}

at::Tensor check_input(Collective c, int rank, int world, int64_t count, at::ScalarType dtype) {
  const int64_t period = check_period(world, dtype);
  const at::Tensor i = at::arange(input_elements(c, count, world), at::kLong);
  return (i.remainder(period) * world + rank).to(dtype);
}

int64_t count_wrong(Collective c, const std::vector<at::Tensor>& result, int rank, int world,
                    int64_t count) {
  const int64_t want = result_elements(c, count, world);
  if (result.empty()) return want;
  std::vector<at::Tensor> flat;
  for (const at::Tensor& t : result) flat.push_back(t.detach().to(at::kCPU).flatten());
  const at::Tensor got = at::cat(flat).to(at::kDouble).contiguous();
  if (got.numel() != want) return want;
  const int64_t period = check_period(world, result.front().scalar_type());
  const double* g = got.data_ptr<double>();
  int64_t wrong = 0;
  for (int64_t k = 0; k < want; ++k) {
    if (g[k] != static_cast<double>(expected_value(c, k, rank, world, count, period))) ++wrong;
  }
  return wrong;
}

}  // namespace ddpbench::comm
