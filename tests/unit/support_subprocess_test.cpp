// support_subprocess_test.cpp — the tests' process runner ends what would otherwise end only at
// ctest's timeout, with no word of why: a child past its limit is terminated and says so, and a
// child that exits while a process it left holds its output is not waited on forever.
#include <gtest/gtest.h>

#include <chrono>

#include "support/subprocess.h"

namespace ddpbench::testing {
namespace {

double seconds_of(const std::chrono::steady_clock::time_point& t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(SupportSubprocess, AChildPastItsLimitIsTerminatedAndTheRunnerSaysSo) {
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r = run_process({"sleep", "60"}, {}, 1);
  EXPECT_LT(seconds_of(start), 30.0);
  EXPECT_EQ(r.exit_code, 128 + 15);
  EXPECT_NE(r.err.find("still running after 1 s"), std::string::npos) << r.err;
}

TEST(SupportSubprocess, AChildThatEndsInTimeIsReadWhole) {
  const ProcessResult r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"}, {}, 60);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

}  // namespace
}  // namespace ddpbench::testing
