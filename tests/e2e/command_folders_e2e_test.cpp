// command_folders_e2e_test.cpp — the folders commands write and read, through the real binary.
// Issue 73 B6: no command deletes results it did not write (Note [A command replaces only its own
// results]). Every command with --out is pointed at a run's folder (its report, state files and
// trace) and refused, exit 2, one line naming what the folder holds, and every file there is left
// as it was: `diff A B --out A` used to leave A with diff.* alone, and `history`, `comm` and
// `scale` did the same. A folder another command wrote is refused to a run too, while a command
// re-run into its own folder replaces it. (`gate` writes no folder.)
// Issue 73 C9: `report`, `gate`, `history` and `diff` handed the folder of a run that failed, a
// folder no run finished into or one that does not exist say which, not "no such file" (Note [A
// folder without a report]).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"
#include "support/file_contents.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;


class CommandFolders : public testing::TempDirTest {
 protected:
  // One checked run with a trace (single and ddp at 2 ranks, 2 steps) shared by the suite; each
  // test copies it before touching it.
  static void SetUpTestSuite() {
    runs_dir_ = testing::make_temp_dir("command-folders");
    const auto r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--modes",
                             "single,ddp", "--steps", "2", "--check-only", "--trace", "--quiet",
                             "--out", runs_dir_ + "/run"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  static void TearDownTestSuite() { fs::remove_all(runs_dir_); }
  std::string copy_of_run(const std::string& name) {
    fs::copy(runs_dir_ + "/run", path(name), fs::copy_options::recursive);
    return path(name);
  }
  static void expect_refused(const testing::ProcessResult& r, const std::string& named,
                             const std::vector<std::string>& args) {
    std::string what;
    for (const auto& a : args) what += a + " ";
    EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << what << "\n" << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << what << "\n" << r.err;
  }
  static inline std::string runs_dir_;
};

TEST_F(CommandFolders, NoCommandRemovesResultsItDidNotWrite) {
  const std::string a = copy_of_run("a");
  const std::string b = copy_of_run("b");
  ASSERT_TRUE(fs::exists(a + "/trace.pt"));
  ASSERT_TRUE(fs::exists(a + "/state_single.pt"));
  const auto before = testing::folder_contents(a);
  // Each command into run a's folder, which for diff and history is also one of their inputs.
  const std::vector<std::vector<std::string>> commands = {
      {"diff", a, b, "--out", a},
      {"history", a, "--out", a},
      {"comm", "--max-bytes", "8", "--iters", "1", "--warmup", "0", "--out", a},
      {"scale", "--scenario", "linear_mse", "--gpus", "1,2", "--steps", "2", "--out", a},
      {"report", b, "--out", a},
      {"project", "--from", b, "--out", a},
  };
  for (const auto& args : commands) {
    // It names the command that wrote the folder and what would be lost.
    expect_refused(ddpbench(args),
                   args[0] == "report" || args[0] == "project"
                       ? "report.json"
                       : "`ddpbench run` wrote ('report.json', 'state_",
                   args);
    EXPECT_EQ(testing::folder_contents(a), before) << args[0] << " changed run a's folder";
  }
  // A diff's folder: a run into it is refused; the diff itself replaces its own.
  const auto diffed = ddpbench({"diff", a, b, "--out", path("d")});
  ASSERT_EQ(diffed.exit_code, 0) << diffed.out << diffed.err;
  const auto diff_folder = testing::folder_contents(path("d"));
  const std::vector<std::string> run_into_d = {"run",     "--scenario", "linear_mse",
                                               "--steps", "1",          "--check-only",
                                               "--quiet", "--out",      path("d")};
  expect_refused(ddpbench(run_into_d), "`ddpbench diff` wrote ('diff.html'", run_into_d);
  EXPECT_EQ(testing::folder_contents(path("d")), diff_folder);
  const auto again = ddpbench({"diff", b, a, "--out", path("d")});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(testing::folder_names(path("d")),
            (std::vector<std::string>{".ddpbench-run", "diff.html", "diff.json", "diff.txt"}));
}

// What each command says of a failed run's folder (output_dir_test.cpp holds the other kinds of
// folder without a report).
TEST_F(CommandFolders, AFailedRunsFolderIsNamedAsOne) {
  const std::vector<std::string> crash = {"run",
                                          "--scenario",
                                          "linear_mse",
                                          "--gpus",
                                          "2",
                                          "--modes",
                                          "ddp",
                                          "--steps",
                                          "2",
                                          "--check-only",
                                          "--inject-fault",
                                          "crash:rank=1,step=0",
                                          "--quiet",
                                          "--out",
                                          path("failed")};
  ASSERT_EQ(ddpbench(crash).exit_code, 3);
  ASSERT_EQ(testing::folder_names(path("failed")), testing::kFailureOnlyFolder);
  const std::string ok = copy_of_run("ok");
  const std::string failed = path("failed");
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"report", failed},
                                             {"gate", "--baseline", failed, "--current", ok},
                                             {"history", ok, failed, "--out", path("h")},
                                             {"diff", ok, failed, "--out", path("d")}}) {
    const auto r = ddpbench(args);
    expect_refused(
        r, "failed' holds no report.json but the failure.json of a run that failed (exit 3: rank 1",
        args);
    EXPECT_EQ(r.err.find("no such file"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(path("h")));
  EXPECT_FALSE(fs::exists(path("d")));
  // A failed run among a folder of runs is left out, and the output says so.
  fs::create_directories(path("series"));
  fs::rename(ok, path("series/c1"));
  fs::rename(failed, path("series/c2"));
  const auto history = ddpbench({"history", path("series"), "--out", path("h")});
  EXPECT_EQ(history.exit_code, 0) << history.out << history.err;
  EXPECT_NE(history.out.find("left out 'c2': its run failed"), std::string::npos) << history.out;
}

}  // namespace
}  // namespace ddpbench
