// projection_reporters.h — the formats of `ddpbench project`'s ProjectionReport: projection.json
// (canonical; fields in reports/SCHEMA.md), projection.csv (one row per projected point), the
// console table, and projection.html (the measured scaling curve with the projection drawn as
// its dashed extension). They only format: every number is computed in harness/projection/.
#pragma once

#include <string>

#include "reports/projection/projection_record.h"

namespace ddpbench::reports {

std::string projection_json(const ProjectionReport& report);
std::string projection_csv(const ProjectionReport& report);
std::string projection_console(const ProjectionReport& report);
std::string projection_html(const ProjectionReport& report);

}  // namespace ddpbench::reports
