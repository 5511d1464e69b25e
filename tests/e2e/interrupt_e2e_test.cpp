// interrupt_e2e_test.cpp — "lose nothing, leave nothing half-written" with the real binary:
// SIGINT, SIGTERM and SIGHUP at each phase of a run (batch export, single training, the DDP
// phase) stop every worker, remove what the run staged and every folder it created, say so in one
// line and exit 128 + the signal; a run owns its --out folder (refuses foreign files, locks it,
// replaces an earlier run's files); `report` never rewrites its input and has one verdict; a signal
// after the commit lets the run finish; a nested run (scale) neither speaks nor leaves files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;
using testing::read_json;

class InterruptE2E : public testing::TempDirTest {
 protected:
  // Shell test: the run ($pid) has blocked SIGHUP, SIGINT and SIGTERM for its signal watcher
  // (signal_cleanup.h), so a signal from now on is cleaned up after, not fatal by default. (A new
  // --out appears only at the commit, so no folder marks the start of training.)
  inline static const std::string kSignalsTaken =
      "grep -Eq '^SigBlk:[[:space:]]*[0-9a-f]*4003$' /proc/$pid/status";
  // Starts `ddpbench args`, waits (up to 120 s) until the shell test `ready` holds ($pid is the
  // run's process), sends `sig`, and returns the exit code the shell saw, with the run's stderr.
  testing::ProcessResult interrupt_when(const std::vector<std::string>& args,
                                        const std::string& ready, const std::string& sig) {
    std::string command = std::string("'") + testing::kDdpbenchBinary + "'";
    for (const auto& a : args) command += " '" + a + "'";
    const std::string script = command + " >/dev/null 2>" + path("stderr") + " & pid=$!\n" +
                               "for i in $(seq 2400); do if " + ready +
                               "; then break; fi; sleep 0.05; done\n" + "kill -" + sig +
                               " $pid; wait $pid; rc=$?; echo \"$rc\"";
    testing::ProcessResult r = testing::run_process({"bash", "-c", script});
    std::ifstream err(path("stderr"));
    r.err.assign(std::istreambuf_iterator<char>(err), std::istreambuf_iterator<char>());
    r.exit_code = std::stoi(r.out);
    return r;
  }
};

TEST_F(InterruptE2E, SigintDuringBatchExportRemovesTheStagedFileAndEveryCreatedFolder) {
  const std::string out = path("a/b/c");
  // A new --out is staged in a hidden folder beside its first missing folder until the commit.
  const auto r =
      interrupt_when({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "3000",
                      "--export-batches", "--quiet", "--out", out},
                     "ls " + path(".a.tmp-") + "*/b/c/.batches.pt.tmp-* >/dev/null 2>&1", "INT");
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIGINT"), std::string::npos) << r.err;
  EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
  EXPECT_FALSE(fs::exists(path("a"))) << "every folder the run created must go";
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp_), fs::directory_iterator()), 1)
      << "only the stderr capture may remain";
  EXPECT_FALSE(testing::process_alive_with(out));
}

TEST_F(InterruptE2E, SigtermDuringTheDdpPhaseStopsEveryWorker) {
  const std::string out = path("ddp");
  const auto r = interrupt_when({"run", "--scenario", "toy_cnn", "--gpus", "2", "--modes", "ddp",
                                 "--steps", "3000", "--quiet", "--out", out},
                                "[ \"$(pgrep -P $pid ddpbench-rank | wc -l)\" -ge 2 ]", "TERM");
  EXPECT_EQ(r.exit_code, 143) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIGTERM; stopped 2 child process(es)"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(testing::process_alive_with(out)) << "a worker outlived the run";
}

TEST_F(InterruptE2E, SighupDuringSingleTrainingLeavesNothing) {
  const std::string out = path("single");
  const auto r =
      interrupt_when({"run", "--scenario", "toy_cnn", "--steps", "3000", "--quiet", "--out", out},
                     kSignalsTaken + " && sleep 1", "HUP");
  EXPECT_EQ(r.exit_code, 129) << r.err;
  EXPECT_NE(r.err.find("interrupted by SIGHUP"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// Issue 21 item 13: SIGTERM just after the commit exited 143 ("removed 0 staged file(s)") and left
// the whole folder without the summary or the "wrote" line. The hook signals right after the
// commit, every time: the run finishes as it would have, exit 0.
TEST_F(InterruptE2E, ASignalRightAfterTheCommitLetsTheRunFinish) {
  const std::string out = path("committed");
  const auto r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--steps", "1",
                           "--check-only", "--quiet", "--out", out},
                          {"DDPBENCH_TEST_SIGNAL_AFTER_COMMIT=1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("SIGTERM arrived after the results were written"), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("wrote " + out + "/report."), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(out + "/report.json"));
  EXPECT_TRUE(fs::exists(out + "/state_ddp.pt"));
}

// Item 14: SIGTERM during scale said "interrupted" twice (the nested run spoke too).
TEST_F(InterruptE2E, SigtermDuringScaleIsSaidOnce) {
  const std::string out = path("sweep");
  const auto r = interrupt_when({"scale", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "3000",
                                 "--warmup", "0", "--quiet", "--out", out},
                                "[ \"$(pgrep -P $pid | wc -l)\" -ge 1 ] && sleep 1", "TERM");
  EXPECT_EQ(r.exit_code, 143) << r.err;
  EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// Item 14: SIGKILL of the nested run inside scale left its workers' ddpbench-workers-* folder in
// TMPDIR; the nested run now keeps it inside scale's own private folder, which scale removes.
TEST_F(InterruptE2E, AKilledScalePointLeavesNothingInTmpdir) {
  const std::string tmpdir = path("tmp");
  fs::create_directories(tmpdir);
  const std::string script =
      std::string("'") + testing::kDdpbenchBinary +
      "' scale --scenario toy_cnn --gpus 2 --steps 3000 --warmup 0 --quiet --out '" +
      path("sweep") +
      "' >/dev/null 2>&1 & pid=$!\n"
      "for i in $(seq 2400); do n=$(pgrep -P $pid | head -1); "
      "[ -n \"$n\" ] && [ \"$(pgrep -P $n ddpbench-rank | wc -l)\" -ge 2 ] && break; sleep 0.05; "
      "done\n"
      "kill -KILL $n; wait $pid; echo $?";
  const auto r = testing::run_process({"bash", "-c", script}, {"TMPDIR=" + tmpdir});
  EXPECT_EQ(r.out, "3\n") << "scale names the point that failed";
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(tmpdir)) left.push_back(e.path().string());
  EXPECT_TRUE(left.empty()) << left.front();
  EXPECT_FALSE(fs::exists(path("sweep")));
}

// A run whose ranks failed leaves one complete file saying why (Note [The flight recorder]), and
// nothing of its staging: no hidden folder beside the ones it made for --out.
TEST_F(InterruptE2E, AFailedRunLeavesItsFailureAloneInTheFoldersItCreated) {
  const auto r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--inject-fault",
                           "crash:rank=1,step=0", "--quiet", "--out", path("n/e/s/t")});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(testing::folder_names(path("n")), std::vector<std::string>{"e"});
  EXPECT_EQ(testing::folder_names(path("n/e/s/t")), testing::kFailureOnlyFolder);
}

TEST_F(InterruptE2E, ARunOwnsItsFolder) {
  // A folder with someone else's files is refused and left as it was.
  fs::create_directories(path("mine"));
  std::ofstream(path("mine/notes.txt")) << "keep me";
  auto r = ddpbench({"run", "--scenario", "linear_mse", "--quiet", "--out", path("mine")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("'notes.txt', which no ddpbench run wrote"), std::string::npos) << r.err;
  EXPECT_EQ(std::distance(fs::directory_iterator(path("mine")), fs::directory_iterator()), 1);

  // An earlier run's folder is replaced whole: its dp state does not stay beside the new report.
  const std::string out = path("reused");
  r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--modes", "single,dp", "--quiet",
                "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(fs::exists(out + "/state_dp.pt"));
  // (a bare run would train dp again: Note [Default comparison])
  r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--modes", "single,ddp",
                "--quiet", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(out + "/state_dp.pt")) << "an earlier run's file was left behind";
  EXPECT_TRUE(fs::exists(out + "/state_single.pt"));

  // While another process holds the folder, a run is refused instead of mixing its files in.
  const auto locked =
      testing::run_process({"flock", "--nonblock", out, testing::kDdpbenchBinary, "run",
                            "--scenario", "linear_mse", "--quiet", "--out", out});
  EXPECT_EQ(locked.exit_code, 2) << locked.err;
  EXPECT_NE(locked.err.find("another ddpbench process is writing into this folder"),
            std::string::npos)
      << locked.err;
}

TEST_F(InterruptE2E, ReportNeverRewritesItsInputAndHasOneVerdict) {
  const std::string out = path("run");
  ASSERT_EQ(ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--quiet", "--out", out})
                .exit_code,
            0);
  // Unknown fields survive: the input is neither rewritten nor re-serialised.
  nlohmann::json doc = read_json(out + "/report.json");
  doc["added_by_a_user"] = "keep";
  std::ofstream(out + "/report.json") << doc.dump(1);
  const auto before = fs::last_write_time(out + "/report.json");
  auto r = ddpbench({"report", out + "/report.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(fs::last_write_time(out + "/report.json"), before);
  EXPECT_EQ(read_json(out + "/report.json").at("added_by_a_user"), "keep");
  r = ddpbench({"report", out, "--out", path("copy")});  // a run's folder works as input too
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json(path("copy") + "/report.json").at("added_by_a_user"), "keep");

  // A hand-edited status that its numbers contradict is refused, not rendered two ways.
  doc = read_json(out + "/report.json");
  doc["results"][1]["checks"][0]["status"] = "fail";
  std::ofstream(out + "/report.json") << doc.dump(1);
  r = ddpbench({"report", out + "/report.json", "--out", path("edited")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("its numbers say pass"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("edited")));
  // Made consistent (the numbers of a failing check), FAIL is FAIL on stdout, in report.md and in
  // the exit code.
  doc["results"][1]["checks"][0]["outside"] = 1;
  doc["results"][1]["checks"][0]["error"] = 2.0;
  doc["verdict"] = "fail";
  doc["passed"] = false;
  std::ofstream(out + "/report.json") << doc.dump(1);
  r = ddpbench({"report", out + "/report.json", "--out", path("failing")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("\nFAIL"), std::string::npos) << r.out;
  std::ifstream md(path("failing") + "/report.md");
  const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("FAIL"), std::string::npos);
  EXPECT_EQ(text.find("PASS"), std::string::npos) << text;

  // A folder without a report is one clear line, exit 2.
  fs::create_directories(path("empty"));
  r = ddpbench({"report", path("empty")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("without a report.json"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace ddpbench
