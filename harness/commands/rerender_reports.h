// rerender_reports.h — `ddpbench report`, once its flags are parsed: every report format
// rendered again from a canonical report.json (JSON is canonical; the rest is rendered from it).
#pragma once

#include "requests/run_request.h"

namespace ddpbench::commands {

int rerender_reports(const requests::ReportRequest& request);

}  // namespace ddpbench::commands
