// projection_csv_reporter.cpp — projection.csv: one row per projected (link, devices) point, the
// columns of the console table in plain units. Numbers use "%.9g": round-trippable, locale-free.
#include <fmt/format.h>

#include "reports/projection/projection_reporters.h"

namespace ddpbench::reports {

std::string projection_csv(const ProjectionReport& r) {
  std::string out =
      "algo,link_gbit_s,devices,allreduce_s,exposed_comm_s,step_s,samples_per_s,"
      "scaling_efficiency\n";
  for (const ProjectedPoint& p : r.projected) {
    out += fmt::format("{},{:.9g},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}\n", r.model.algo,
                       p.link_gbit_s, p.devices, p.allreduce_s, p.exposed_comm_s, p.step_s,
                       p.samples_per_s, p.scaling_efficiency);
  }
  return out;
}

}  // namespace ddpbench::reports
