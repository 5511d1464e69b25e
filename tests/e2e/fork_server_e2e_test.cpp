// fork_server_e2e_test.cpp — the suites' fork server (harness/launch/fork_server.h) is only a
// shortcut if a forked ddpbench is its exec'd twin: the same output, errors and exit code for the
// same argv in the same working directory and environment; the request's own environment, not the
// server's; the request's command line in ps; a signal handled as an exec'd run handles it; and an
// exec, not a fork, where a library would have read the environment while loading.
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

#include "support/cli_runner.h"
#include "support/fork_client.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;

class ForkServer : public testing::TempDirTest {
 protected:
  void SetUp() override {
    const char* start = std::getenv(testing::kTestStartEnv);
    if (start != nullptr && std::string(start) == "exec") GTEST_SKIP() << "the suite runs by exec";
    TempDirTest::SetUp();
  }
  // Runs argv (after the binary) both ways from the temporary directory; expects twins.
  void expect_twins(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    std::vector<std::string> argv = {testing::kDdpbenchBinary};
    argv.insert(argv.end(), args.begin(), args.end());
    const fs::path was = fs::current_path();
    fs::current_path(tmp_);
    const testing::ProcessResult forked = testing::run_forked(argv, env);
    const testing::ProcessResult execd = testing::run_process(argv, env);
    fs::current_path(was);
    const std::string what = args.empty() ? "(no arguments)" : args[0];
    EXPECT_TRUE(forked.forked) << what << ": the server did not fork it";
    EXPECT_FALSE(execd.forked);
    EXPECT_EQ(forked.exit_code, execd.exit_code) << what << "\n" << forked.err << execd.err;
    EXPECT_EQ(forked.out, execd.out) << what;
    EXPECT_EQ(forked.err, execd.err) << what;
  }
};

TEST_F(ForkServer, AForkedRunIsItsExecdTwin) {
  expect_twins({"--version"}, {});
  expect_twins({"list"}, {});
  expect_twins({"run", "--no-such-flag"}, {});
  // A relative path resolves in the requester's working directory: there it is a file that is
  // not JSON (elsewhere it would not exist, a different error).
  std::ofstream(path("not.json")) << "no";
  expect_twins({"report", "not.json"}, {});
  // The request's environment, not the server's: a value only this request carries is refused.
  expect_twins({"run", "--scenario", "toy_cnn", "--steps", "1", "--quiet", "--out", "o"},
               {"DDPBENCH_RANK_START=sideways"});
  EXPECT_FALSE(fs::exists(path("o")));
}

TEST_F(ForkServer, PsShowsTheRequestAndASignalEndsItAsAnExecdRun) {
  const std::string out = path("run-shown-in-ps");
  auto run = std::async(std::launch::async, [&] {
    return testing::run_forked({testing::kDdpbenchBinary, "run", "--scenario", "toy_cnn", "--modes",
                                "single", "--steps", "100000", "--quiet", "--out", out},
                               {}, 120);
  });
  // Its oldest process is the run (the rank zygote it forks is a copy with the same command line;
  // the pattern leaves out this shell, whose own command line holds the folder's name);
  // SIGTERM once its signal watcher has blocked the signals (signal_cleanup.h), as the interrupt
  // tests wait.
  const std::string wait_then_term =
      "for i in $(seq 2400); do pid=$(pgrep -o -f '^[^ ]*/ddpbench run .*" + out +
      "') && grep -Eq "
      "'^SigBlk:[[:space:]]*[0-9a-f]*4003$' /proc/$pid/status && break; sleep 0.05; done; "
      "kill -TERM $pid";
  const testing::ProcessResult sent = testing::run_process({"bash", "-c", wait_then_term});
  EXPECT_EQ(sent.exit_code, 0) << "pgrep -f never saw the run's command line: " << sent.err;
  const testing::ProcessResult r = run.get();
  EXPECT_TRUE(r.forked);
  EXPECT_EQ(r.exit_code, 143) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIGTERM"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(ForkServer, WhatALibraryReadsWhileLoadingIsExecdAndSoIsTheSwitch) {
  // TORCH_* and OMP_* are read while libtorch and OpenMP load: the server read its own once.
  const auto loading =
      testing::run_forked({testing::kDdpbenchBinary, "--version"}, {"TORCH_FORK_SERVER_PROBE=1"});
  EXPECT_FALSE(loading.forked);
  EXPECT_EQ(loading.exit_code, 0) << loading.err;
  setenv(testing::kTestStartEnv, "exec", 1);
  const auto asked = testing::run_forked({testing::kDdpbenchBinary, "--version"});
  unsetenv(testing::kTestStartEnv);
  EXPECT_FALSE(asked.forked);
  EXPECT_EQ(asked.exit_code, 0) << asked.err;
}

}  // namespace
}  // namespace ddpbench
