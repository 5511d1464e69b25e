// flag_reference.h — the flag reference of `run` and `scale` as Markdown, written from the run
// options table (requests/run_options.h): what `ddpbench list --flags` prints and docs/flags.md
// holds (a test keeps the two equal).
#pragma once

#include <string>

namespace ddpbench::cli {

std::string flag_reference();

}  // namespace ddpbench::cli
