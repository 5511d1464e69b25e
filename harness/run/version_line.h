// version_line.h — the one line that names this build: `ddpbench --version` and the first line
// of every run header.
#pragma once

#include <string>

namespace ddpbench::run {

// "ddpbench 0.1.0 (git <rev>, libtorch <v>)".
std::string version_line();

}  // namespace ddpbench::run
