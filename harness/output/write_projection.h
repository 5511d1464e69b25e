// write_projection.h — the end of `ddpbench project`: stage projection.{json,csv,html} rendered
// from one ProjectionReport, commit the output folder (a run's folder rules: output_dir.h), print
// the console table and where the files went.
#pragma once

#include <string>
#include <vector>

#include "output/output_dir.h"
#include "reports/projection/projection_record.h"

namespace ddpbench::output {

// The files write_projection stages (what `project` may replace: output_dir.h).
inline const std::vector<std::string> kProjectionFiles = {"projection.json", "projection.csv",
                                                          "projection.html"};

void write_projection(const reports::ProjectionReport& report, OutputDir& out);

}  // namespace ddpbench::output
