// comm_plan.h — a `ddpbench comm` request resolved and checked: the collectives, the sweep's
// sizes, dtype, backend, device, world and fault, all validated before anything is measured,
// spawned or written (exit 2, one line naming the problem and the fix).
#pragma once

#include <c10/core/ScalarType.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/backend_support.h"
#include "comm/collective.h"
#include "launch/environment.h"
#include "requests/run_request.h"
#include "runtime/execution_context.h"

namespace ddpbench::comm_sweep {

// --inject-fault corrupt:rank=R[,collective=C].
struct CommFault {
  int rank = 0;
  comm::Collective collective = comm::Collective::kAllreduce;
};

struct CommPlan {
  std::vector<comm::Collective> collectives;
  std::vector<int64_t> sizes;  // bytes, ascending
  at::ScalarType dtype = at::kFloat;
  int64_t iters = 10;
  int64_t warmup = 2;
  comm::Backend backend = comm::default_backend();
  runtime::DeviceKind device = runtime::DeviceKind::kCpu;
  int world_size = 2;
  std::string out;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  std::optional<CommFault> fault;
};

// "64M" -> 67108864, "44.7M" -> 46871347 (rounded down), "8" -> 8. Throws InputError naming
// `flag` and the accepted forms.
int64_t parse_byte_size(const std::string& text, const char* flag);

// `world`: this process's launched world, nullopt in the launching parent. Throws InputError.
CommPlan resolve_comm(const requests::CommRequest& request,
                      const std::optional<launch::WorldInfo>& world);

}  // namespace ddpbench::comm_sweep
