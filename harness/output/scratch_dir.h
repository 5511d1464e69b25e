// scratch_dir.h — a private temporary directory that is removed with everything in it when the
// owner goes out of scope: where `scale` points and the --bisect re-run write their reports
// before the parent reads them back.
#pragma once

#include <string>

#include "launch/signal_cleanup.h"

namespace ddpbench::output {

class ScratchDir {
 public:
  // Creates <system temp>/<prefix>-XXXXXX (mode 0700); throws std::runtime_error when it cannot.
  explicit ScratchDir(const std::string& prefix);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  launch::TrackedResource tracked_;  // removed by a signal's cleanup too
};

}  // namespace ddpbench::output
