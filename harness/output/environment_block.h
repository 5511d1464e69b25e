// environment_block.h — collects the environment block of a report (host, cores, library versions,
// compiler, git revision, argv), so a result can be traced to what produced it.
#pragma once

#include <string>
#include <vector>

#include "reports/run/run_record.h"
#include "runtime/execution_context.h"

namespace ddpbench::output {

// The devices, versions and numerics come from this process's execution context.
reports::RunContext collect_context(const std::vector<std::string>& argv,
                                    const runtime::ExecutionContext& context);

}  // namespace ddpbench::output
