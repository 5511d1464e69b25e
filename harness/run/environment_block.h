// environment_block.h — collects the environment block of a report (host, cores, library versions,
// compiler, git revision, argv), so a result can be traced to what produced it.
#pragma once

#include <string>
#include <vector>

#include "reports/run_record.h"
#include "runtime/device_probe.h"

namespace ddpbench::run {

// `gpus`: this process's device probe (the execution context has it).
reports::RunContext collect_context(const std::vector<std::string>& argv,
                                    const runtime::GpuInfo& gpus);

}  // namespace ddpbench::run
