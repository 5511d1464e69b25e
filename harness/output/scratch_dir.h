// scratch_dir.h — a private temporary directory that is removed with everything in it when the
// owner goes out of scope: where `scale` points and the --bisect re-run write their reports
// before the parent reads them back. Named after this process and locked while it lives, so that
// a later run removes it should this one be killed outright (launch/stale_reclaim.h).
#pragma once

#include <optional>
#include <string>

#include "launch/signal_cleanup.h"
#include "launch/stale_reclaim.h"

namespace ddpbench::output {

class ScratchDir {
 public:
  // Creates <system temp>/ddpbench-<kind>-<pid>-XXXXXX (mode 0700), after removing the stale
  // folders of dead runs; throws std::runtime_error when it cannot.
  explicit ScratchDir(const std::string& kind);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::optional<launch::OwnedTempDir> owned_;
  std::string path_;
  launch::TrackedResource tracked_;  // removed by a signal's cleanup too
};

}  // namespace ddpbench::output
