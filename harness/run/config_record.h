// config_record.h — the report's configuration block: everything about a run that changes what
// its modes compute or how they are judged (the scenario as a file that reproduces it, the plan,
// the engines' settings, the injected fault), read back by `report` and `gate`, which recompute
// every limit from it (compare/check_limits.h).
#pragma once

#include "reports/run/run_record.h"
#include "run/run_description.h"
#include "training/run_setup.h"

namespace ddpbench::run {

reports::RunConfig config_record(const training::RunSetup& setup, int64_t threads,
                                 const RunDescription& run);

}  // namespace ddpbench::run
