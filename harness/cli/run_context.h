// run_context.h — collects the environment block of a report (host, cores, library versions,
// compiler, git revision, argv), so a result can be traced to what produced it.
#pragma once

#include <string>
#include <vector>

#include "reports/run_record.h"

namespace ddpbench::cli {

reports::RunContext collect_context(const std::vector<std::string>& argv);

// "ddpbench 0.1.0 (git <rev>, libtorch <v>)" for --version.
std::string version_line();

}  // namespace ddpbench::cli
