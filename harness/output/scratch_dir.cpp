// scratch_dir.cpp — see scratch_dir.h.
#include "output/scratch_dir.h"

#include <filesystem>
#include <system_error>

namespace ddpbench::output {

ScratchDir::ScratchDir(const std::string& kind) {
  launch::reclaim_stale_leftovers();
  auto& cleanup = launch::SignalCleanup::process();
  const auto lock = cleanup.hold();
  owned_.emplace(kind);
  path_ = owned_->path();
  tracked_ = launch::TrackedResource(cleanup.track_path(path_));
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;  // a destructor must not throw; a leftover temp dir is harmless
  std::filesystem::remove_all(path_, ignored);
  tracked_.reset();
}

}  // namespace ddpbench::output
