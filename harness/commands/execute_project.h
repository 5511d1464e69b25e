// execute_project.h — `ddpbench project`, once its flags are parsed: read a run's or a sweep's
// report.json, project its DDP scaling to other device counts and links
// (projection/scaling_projection.h) and write projection.{json,csv,html} into --out (beside the
// report when --out is the report's own folder).
#pragma once

#include "requests/run_request.h"

namespace ddpbench::commands {

// Bad input (unreadable or foreign report, no timed DDP result, options out of range):
// InputError before anything is written.
int execute_project(const requests::ProjectRequest& request);

}  // namespace ddpbench::commands
