// amp_e2e_fixture.h — the fixture of the AmpE2E suite, whose tests sit in two files
// (e2e/amp_e2e_test.cpp, e2e/amp_oracle_e2e_test.cpp): gtest runs a suite's tests only where they
// share one fixture class, so it is declared once, here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {

class AmpE2E : public testing::TempDirTest {
 protected:
  // `scenario`'s check phase with `extra`, expected to exit with `exit_code` (1: a check failed).
  nlohmann::json run_amp(const std::string& name, std::vector<std::string> extra, int exit_code = 0,
                         const std::string& scenario = "toy_cnn") {
    const std::string dir = path(name);
    std::vector<std::string> args = {"run",     "--scenario", scenario, "--check-only",
                                     "--quiet", "--out",      dir};
    args.insert(args.end(), extra.begin(), extra.end());
    last_ = testing::ddpbench(args);
    EXPECT_EQ(last_.exit_code, exit_code) << name << last_.out << last_.err;
    return testing::read_json(dir + "/report.json");
  }
  // toy_cnn under --amp `amp` on 2 ranks, 4 checked steps of `modes` with the batches exported
  // for the oracle, into `dir`; fp16 starts its GradScaler at 2^20 (the first steps overflow and
  // are skipped; bf16 has no GradScaler and refuses the flag).
  static testing::ProcessResult oracle_run(const std::string& amp, const std::string& modes,
                                           const std::string& dir,
                                           const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"run",     "--scenario", "toy_cnn", "--amp",
                                     amp,       "--gpus",     "2",       "--modes",
                                     modes,     "--steps",    "4",       "--check-only",
                                     "--quiet", "--out",      dir,       "--export-batches"};
    if (amp == "fp16") args.insert(args.end(), {"--grad-scaler-init", "1048576"});
    args.insert(args.end(), extra.begin(), extra.end());
    return testing::ddpbench(args);
  }
  testing::ProcessResult last_;
};

}  // namespace ddpbench
