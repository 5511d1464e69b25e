// version_line.cpp — see version_line.h.
#include "run/version_line.h"

#include <fmt/format.h>
#include <torch/version.h>

#include "ddpbench_git_revision.h"
#include "ddpbench_version.h"

namespace ddpbench::run {

std::string version_line() {
  return fmt::format("ddpbench {} (git {}, libtorch {})", DDPBENCH_VERSION, DDPBENCH_GIT_REVISION,
                     TORCH_VERSION);
}

}  // namespace ddpbench::run
