// output_dir_test.cpp — "nothing half-written": staged files appear only on commit, an
// abandoned run leaves no temporaries and removes the directory it created, and unusable --out
// paths are refused up front; a command replaces only what the same command wrote; a folder
// without a report is named for what it is (output/report_file.h).
#include "output/output_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

#include "errors.h"
#include "output/report_file.h"
#include "support/subprocess.h"
#include "support/temp_dir_test.h"

namespace ddpbench::run {
namespace {
namespace fs = std::filesystem;

class OutputDirTest : public testing::TempDirTest {};

TEST_F(OutputDirTest, CommitMovesEveryStagedFileIntoPlace) {
  const std::string dir = tmp_ + "/run";
  {
    output::OutputDir out(dir);
    out.stage("a.json", "{}");
    out.stage("b.pt", std::string("\0\1", 2));
    EXPECT_FALSE(fs::exists(dir + "/a.json"));
    out.commit();
  }
  EXPECT_TRUE(fs::exists(dir + "/a.json"));
  EXPECT_EQ(fs::file_size(dir + "/b.pt"), 2u);
  // The two files and the manifest naming them (what the next run into this folder replaces) and
  // the command that wrote them (Note [A command replaces only its own results]).
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 3);
  std::ifstream manifest(dir + "/" + output::OutputDir::kManifest);
  const std::string listed((std::istreambuf_iterator<char>(manifest)),
                           std::istreambuf_iterator<char>());
  EXPECT_EQ(listed, "# ddpbench run\na.json\nb.pt\n");
}

// Issue 21 item 7: a trailing slash or a ".." in a new --out was refused with "cannot create
// directory ... (it appeared meanwhile)".
TEST_F(OutputDirTest, NewPathsWithTrailingSlashesOrDotsAreNormalised) {
  const std::vector<std::pair<std::string, std::string>> cases = {{"/newdir/", "/newdir"},
                                                                  {"/a/b/c/", "/a/b/c"},
                                                                  {"/./newdot/.", "/newdot"},
                                                                  {"/newx/../newy", "/newy"},
                                                                  {"/newz//", "/newz"}};
  for (const auto& [given, made] : cases) {
    {
      output::OutputDir out(tmp_ + given);
      EXPECT_EQ(out.path(), tmp_ + made) << given;
      out.stage("report.json", "{}");
      out.commit();
    }
    EXPECT_TRUE(fs::exists(tmp_ + made + "/report.json")) << given;
  }
  EXPECT_FALSE(fs::exists(tmp_ + "/newx"));
  {
    output::OutputDir abandoned(tmp_ + "/gone/deeper/");  // removed whole when never committed
  }
  EXPECT_FALSE(fs::exists(tmp_ + "/gone"));
}

TEST_F(OutputDirTest, AddFilesLeavesOtherFilesAndWritesNoManifest) {
  fs::create_directories(tmp_ + "/theirs");
  std::ofstream(tmp_ + "/theirs/notes.txt") << "x";
  EXPECT_THROW(output::OutputDir(tmp_ + "/theirs"), InputError);
  {
    output::OutputDir out(tmp_ + "/theirs", output::OutputPolicy::kAddFiles);
    out.stage("report.md", "# r");
    out.commit();
  }
  EXPECT_TRUE(fs::exists(tmp_ + "/theirs/notes.txt"));
  EXPECT_TRUE(fs::exists(tmp_ + "/theirs/report.md"));
  EXPECT_FALSE(fs::exists(tmp_ + "/theirs/" + output::OutputDir::kManifest));
}

// Issue 73 B6 (Note [A command replaces only its own results]): `diff A B --out A` removed run A's
// results at commit. A folder is replaced only by the command that wrote it; a folder from before
// the manifest named its command is judged by its files.
TEST_F(OutputDirTest, ACommandReplacesOnlyWhatTheSameCommandWrote) {
  const std::string dir = tmp_ + "/d";
  const auto write = [&dir](const std::string& command, const std::string& name) {
    output::OutputDir out(dir, output::OutputPolicy::kOwnFolder, command);
    out.stage(name, "x");
    out.commit();
  };
  write("diff", "diff.json");
  write("diff", "diff.json");                        // a diff re-diffed into its folder
  EXPECT_THROW(output::OutputDir{dir}, InputError);  // a run
  EXPECT_THROW(output::OutputDir(dir, output::OutputPolicy::kOwnFolder, "history"), InputError);
  EXPECT_TRUE(fs::exists(dir + "/diff.json"));
  try {
    output::OutputDir(dir, output::OutputPolicy::kOwnFolder, "scale");
    ADD_FAILURE() << "scale replaced a diff's folder";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("`ddpbench diff` wrote ('diff.json')"), std::string::npos)
        << e.what();
  }
  // Manifests without the command's line: state files are a run's; report files alone may be a
  // run's, a scale's or a report's.
  const std::string legacy = tmp_ + "/legacy";
  fs::create_directories(legacy);
  std::ofstream(legacy + "/report.json") << "{}";
  std::ofstream(legacy + "/" + output::OutputDir::kManifest) << "report.json\n";
  EXPECT_NO_THROW(output::OutputDir(legacy, output::OutputPolicy::kOwnFolder, "scale"));
  EXPECT_NO_THROW(output::OutputDir{legacy});
  EXPECT_THROW(output::OutputDir(legacy, output::OutputPolicy::kOwnFolder, "diff"), InputError);
  std::ofstream(legacy + "/state_single.pt") << "x";
  std::ofstream(legacy + "/" + output::OutputDir::kManifest) << "report.json\nstate_single.pt\n";
  EXPECT_THROW(output::OutputDir(legacy, output::OutputPolicy::kOwnFolder, "scale"), InputError);
  EXPECT_NO_THROW(output::OutputDir{legacy});
}

// Issue 73 C9 (Note [A folder without a report]): a failed run's folder, a folder no run finished
// into and one that does not exist were all "no such file" of a report.json nobody named.
TEST_F(OutputDirTest, AFolderWithoutAReportSaysWhatItIs) {
  const std::string failed = tmp_ + "/failed";
  fs::create_directories(failed);
  std::ofstream(failed + "/failure.json")
      << R"({"failed": true, "exit_code": 3, "failure": "rank 1 exited with code 3 at check )"
         R"(phase step 0 of 2, forward; its stderr ends: x; flight recorder: y"})";
  fs::create_directories(tmp_ + "/empty");
  const std::string failure =
      "failure.json of a run that failed (exit 3: rank 1 exited with code 3 at check phase step 0 "
      "of 2, forward): fix what failed and re-run it";
  const std::string empty = "empty' is a folder without a report.json: no run finished into it";
  const std::string missing = "missing' does not exist: no run finished into it";
  for (const auto& [given, says] :
       std::vector<std::pair<std::string, std::string>>{{failed, failure},
                                                        {failed + "/report.json", failure},
                                                        {failed + "/trace.pt", failure},
                                                        {tmp_ + "/empty", empty},
                                                        {tmp_ + "/empty/report.json", empty},
                                                        {tmp_ + "/missing", missing},
                                                        {tmp_ + "/missing/report.json", missing}}) {
    const std::string why = output::why_no_results(given);
    EXPECT_NE(why.find(says), std::string::npos) << given << ": " << why;
    try {
      output::report_json_path(given);
      ADD_FAILURE() << given << " was taken for a report";
    } catch (const InputError& e) {
      EXPECT_EQ(e.what(), why);
    }
  }
  // Not a folder without a report: a missing file of another name (its reader says "no such
  // file"), and a finished run's folder.
  EXPECT_EQ(output::why_no_results(tmp_ + "/missing.json"), "");
  fs::create_directories(tmp_ + "/run");
  std::ofstream(tmp_ + "/run/report.json") << "{}";
  EXPECT_EQ(output::why_no_results(tmp_ + "/run"), "");
  EXPECT_EQ(output::report_json_path(tmp_ + "/run"), tmp_ + "/run/report.json");
}

TEST_F(OutputDirTest, AbandonedRunLeavesNothing) {
  const std::string dir = tmp_ + "/new/nested";
  {
    output::OutputDir out(dir);
    out.stage("a.json", "{}");
  }
  EXPECT_FALSE(fs::exists(tmp_ + "/new")) << "every folder created for a failed run must go";
  fs::create_directories(tmp_ + "/existing");
  {
    output::OutputDir out(tmp_ + "/existing");
    out.stage("a.json", "{}");
  }
  EXPECT_TRUE(fs::exists(tmp_ + "/existing"));
  EXPECT_TRUE(fs::is_empty(tmp_ + "/existing"));
}

// A run killed outright (SIGKILL) left an empty --out and every folder above it that it had
// made: a new --out now appears only at the commit, whole, and the hidden folder a run killed
// while staging leaves is removed by the next run into the same --out.
TEST_F(OutputDirTest, ANewFolderAppearsOnlyAtTheCommit) {
  const std::string dir = tmp_ + "/fresh/run";
  {
    output::OutputDir out(dir);
    EXPECT_FALSE(fs::exists(tmp_ + "/fresh")) << "made before any result was staged";
    out.stage("a.json", "{}");
    EXPECT_FALSE(fs::exists(tmp_ + "/fresh")) << "made before the commit";
    out.commit();
    EXPECT_TRUE(fs::exists(dir + "/a.json"));
  }
  // Only the results' folder: no hidden staging folder beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp_), fs::directory_iterator()), 1);

  // What a run killed while staging leaves (its pid is gone: a reaped child's), reclaimed.
  const testing::ProcessResult gone = testing::run_process({"sh", "-c", "echo $$"});
  const std::string stale = tmp_ + "/.later.tmp-" + gone.out.substr(0, gone.out.find('\n'));
  fs::create_directories(stale + "/x");
  {
    output::OutputDir out(tmp_ + "/later/x");
    EXPECT_FALSE(fs::exists(stale)) << "a dead run's hidden folder was left";
  }
  EXPECT_FALSE(fs::exists(tmp_ + "/later"));
}

TEST_F(OutputDirTest, RefusesPathsThatCannotBeDirectories) {
  std::ofstream(tmp_ + "/file") << "x";
  EXPECT_THROW(output::OutputDir(tmp_ + "/file"), InputError);
  EXPECT_THROW(output::OutputDir(tmp_ + "/file/sub"), InputError);
}

}  // namespace
}  // namespace ddpbench::run
