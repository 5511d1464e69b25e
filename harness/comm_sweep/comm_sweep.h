// comm_sweep.h — one rank's share of `ddpbench comm`: for every collective and size, a check pass
// (collective_check.h) and then the timed loop (nccl-tests' order: --warmup untimed calls, a
// barrier, --iters timed calls). Every rank returns the same rows: time is the max over ranks of
// each rank's mean, #wrong the sum over ranks. Rows travel from a spawned rank 0 to its parent as
// text (encode_comm_rows).
#pragma once

#include <c10/core/Device.h>

#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm_sweep/comm_plan.h"
#include "reports/comm/comm_record.h"

namespace ddpbench::comm_sweep {

// Called before each (collective, size) with its index and "allreduce 1048576 B".
using CommProgress = std::function<void(int64_t index, const std::string& what)>;

std::vector<reports::CommRow> run_comm_sweep(comm::Communicator& comm, const CommPlan& plan,
                                             c10::Device device, const CommProgress& progress);

std::string encode_comm_rows(const std::vector<reports::CommRow>& rows);
// Throws WorkerFailure for bytes that are not encode_comm_rows' (a damaged result file).
std::vector<reports::CommRow> decode_comm_rows(const std::string& bytes);

}  // namespace ddpbench::comm_sweep
