// zero_e2e_fixture.h — the fixture of the ZeroE2E suite, whose tests sit in two files
// (e2e/zero_e2e_test.cpp, e2e/zero_faults_e2e_test.cpp): gtest runs a suite's tests only where
// they share one fixture class, so it is declared once, here.
#pragma once

#include <string>
#include <vector>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {

class ZeroE2E : public testing::TempDirTest {
 protected:
  // A toy_cnn run of `modes` with zero at `stage`, 2 ranks, checked only; extra flags appended.
  testing::ProcessResult run_zero(const std::string& dir, int stage, const std::string& modes,
                                  const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"run",
                                     "--scenario",
                                     "toy_cnn",
                                     "--gpus",
                                     "2",
                                     "--modes",
                                     modes,
                                     "--zero-stage",
                                     std::to_string(stage),
                                     "--steps",
                                     "4",
                                     "--check-only",
                                     "--out",
                                     dir};
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::ddpbench(args);
  }
};

}  // namespace ddpbench
