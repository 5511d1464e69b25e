// scaling_projection.h — `ddpbench project`'s numbers: from a measured report (run or scale),
// the step time, throughput and weak-scaling efficiency at device counts and link speeds the
// machine does not have, and the same model checked against the report's own held-out world
// sizes. Reporters only format the result (reports/projection/projection_reporters.h). Formulas and
// assumptions: reports/METRICS.md, "Projection".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "projection/allreduce_model.h"
#include "reports/projection/projection_record.h"
#include "reports/run/run_record.h"

namespace ddpbench::projection {

struct ProjectionOptions {
  std::string source;  // the report's path, for messages and the record
  std::vector<int64_t> devices;
  std::vector<double> link_gbit_s;
  AllreduceAlgo algo = AllreduceAlgo::kRing;
  double alpha_s = 5e-6;  // per-message latency of the projected links
};

// Throws InputError (one line: the problem and the fix) for a report without a timed DDP result
// at a world size >= 2, or options out of range.
reports::ProjectionReport project_scaling(const reports::RunReport& measured,
                                          const ProjectionOptions& options);

}  // namespace ddpbench::projection
