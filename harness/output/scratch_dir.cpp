// scratch_dir.cpp — see scratch_dir.h.
#include "output/scratch_dir.h"

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace ddpbench::output {

ScratchDir::ScratchDir(const std::string& prefix) {
  std::string tmp = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  auto& cleanup = launch::SignalCleanup::process();
  const auto lock = cleanup.hold();
  if (mkdtemp(tmp.data()) == nullptr) {
    throw std::runtime_error("cannot create a temporary directory under " +
                             std::filesystem::temp_directory_path().string());
  }
  path_ = tmp;
  tracked_ = launch::TrackedResource(cleanup.track_path(path_));
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;  // a destructor must not throw; a leftover temp dir is harmless
  std::filesystem::remove_all(path_, ignored);
  tracked_.reset();
}

}  // namespace ddpbench::output
