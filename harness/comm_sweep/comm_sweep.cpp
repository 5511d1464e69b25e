// comm_sweep.cpp — see comm_sweep.h.
#include "comm_sweep/comm_sweep.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <sstream>

#include "comm/collective_check.h"
#include "errors.h"

namespace ddpbench::comm_sweep {
namespace {

// The check pass: unique inputs, one call, the wrong elements of this rank's result. The fault
// (--inject-fault corrupt) changes one element after the collective, as a broken backend would.
int64_t check_once(comm::Communicator& comm, const CommPlan& plan, comm::Collective c,
                   int64_t count, c10::Device device) {
  const int rank = comm.rank();
  const int world = comm.world_size();
  const at::Tensor input = comm::check_input(c, rank, world, count, plan.dtype).to(device);
  std::vector<at::Tensor> result = comm::run_collective(comm, c, input);
  if (plan.fault && plan.fault->rank == rank && plan.fault->collective == c) {
    result.front().view(-1)[0].add_(1);
  }
  return comm::count_wrong(c, result, rank, world, count);
}

// Seconds per call on this rank: the mean over plan.iters calls after plan.warmup untimed ones.
// The timed buffer holds zeros, so repeated in-place sums stay finite and equal.
double time_calls(comm::Communicator& comm, const CommPlan& plan, comm::Collective c, int64_t count,
                  c10::Device device) {
  const at::Tensor buffer = at::zeros({comm::input_elements(c, count, comm.world_size())},
                                      at::TensorOptions().dtype(plan.dtype).device(device));
  std::vector<at::Tensor> result;
  for (int64_t i = 0; i < plan.warmup; ++i) result = comm::run_collective(comm, c, buffer);
  comm.barrier();  // every rank starts its clock together
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < plan.iters; ++i) result = comm::run_collective(comm, c, buffer);
  // A device result is ready on the host only once read: item() waits for the stream the
  // collective was ordered on (host tensors are complete when the call returns).
  if (device.is_cuda()) (void)result.back().view(-1)[0].item<double>();
  const auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(stop - start).count() / static_cast<double>(plan.iters);
}

// Every rank's value of `mine`, through the communicator under test (CPU tensors: every backend
// takes them).
std::vector<double> from_every_rank(comm::Communicator& comm, double mine) {
  const std::vector<at::Tensor> all = comm.allgather(at::full({1}, mine, at::kDouble));
  std::vector<double> out;
  for (const at::Tensor& t : all) out.push_back(t.item<double>());
  return out;
}

}  // namespace

std::vector<reports::CommRow> run_comm_sweep(comm::Communicator& comm, const CommPlan& plan,
                                             c10::Device device, const CommProgress& progress) {
  const int world = comm.world_size();
  const int64_t element = static_cast<int64_t>(c10::elementSize(plan.dtype));
  const bool native_rs = comm::traits(plan.backend).native_reduce_scatter;
  std::vector<reports::CommRow> rows;
  int64_t index = 0;
  for (comm::Collective c : plan.collectives) {
    for (int64_t size : plan.sizes) {
      const int64_t count = comm::count_per_rank(c, size, element, world);
      if (count == 0) continue;  // too small to hold one element per rank
      reports::CommRow row;
      row.collective = comm::collective_name(c);
      row.bytes = comm::size_of(c, count, element, world);
      row.count = count;
      row.dtype = plan.dtype == at::kDouble ? "float64" : "float32";
      row.emulated = c == comm::Collective::kReduceScatter && !native_rs;
      if (progress) progress(index++, fmt::format("{} {} B", row.collective, row.bytes));
      const int64_t wrong = check_once(comm, plan, c, count, device);
      const double seconds = time_calls(comm, plan, c, count, device);
      const std::vector<double> times = from_every_rank(comm, seconds);
      const std::vector<double> wrongs = from_every_rank(comm, static_cast<double>(wrong));
      const double slowest = *std::max_element(times.begin(), times.end());
      for (double w : wrongs) row.wrong += static_cast<int64_t>(w);
      row.time_us = slowest * 1e6;
      row.algbw_gb_s = slowest > 0 ? static_cast<double>(row.bytes) / slowest / 1e9 : 0;
      row.busbw_gb_s = row.algbw_gb_s * comm::bus_factor(c, world);
      rows.push_back(row);
    }
  }
  return rows;
}

std::string encode_comm_rows(const std::vector<reports::CommRow>& rows) {
  std::string out;
  for (const reports::CommRow& r : rows) {
    out +=
        fmt::format("{} {} {} {} {:.17g} {:.17g} {:.17g} {} {}\n", r.collective, r.bytes, r.count,
                    r.dtype, r.time_us, r.algbw_gb_s, r.busbw_gb_s, r.wrong, r.emulated ? 1 : 0);
  }
  return out;
}

std::vector<reports::CommRow> decode_comm_rows(const std::string& bytes) {
  std::vector<reports::CommRow> rows;
  std::istringstream in(bytes);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    reports::CommRow r;
    int emulated = 0;
    if (!(fields >> r.collective >> r.bytes >> r.count >> r.dtype >> r.time_us >> r.algbw_gb_s >>
          r.busbw_gb_s >> r.wrong >> emulated)) {
      throw WorkerFailure("rank 0's comm results are damaged: " + line.substr(0, 80));
    }
    r.emulated = emulated != 0;
    rows.push_back(r);
  }
  return rows;
}

}  // namespace ddpbench::comm_sweep
