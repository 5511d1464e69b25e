// run_output_dir_test.cpp — "nothing half-written": staged files appear only on commit, an
// abandoned run leaves no temporaries and removes the directory it created, and unusable --out
// paths are refused up front.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "errors.h"
#include "run/output_dir.h"
#include "support/subprocess.h"
#include "support/temp_dir_test.h"

namespace ddpbench::run {
namespace {
namespace fs = std::filesystem;

class OutputDirTest : public testing::TempDirTest {};

TEST_F(OutputDirTest, CommitMovesEveryStagedFileIntoPlace) {
  const std::string dir = tmp_ + "/run";
  {
    OutputDir out(dir);
    out.stage("a.json", "{}");
    out.stage("b.pt", std::string("\0\1", 2));
    EXPECT_FALSE(fs::exists(dir + "/a.json"));
    out.commit();
  }
  EXPECT_TRUE(fs::exists(dir + "/a.json"));
  EXPECT_EQ(fs::file_size(dir + "/b.pt"), 2u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
}

TEST_F(OutputDirTest, AbandonedRunLeavesNothing) {
  const std::string dir = tmp_ + "/new/nested";
  {
    OutputDir out(dir);
    out.stage("a.json", "{}");
  }
  EXPECT_FALSE(fs::exists(dir)) << "a directory created for a failed run must be removed";
  fs::create_directories(tmp_ + "/existing");
  {
    OutputDir out(tmp_ + "/existing");
    out.stage("a.json", "{}");
  }
  EXPECT_TRUE(fs::exists(tmp_ + "/existing"));
  EXPECT_TRUE(fs::is_empty(tmp_ + "/existing"));
}

TEST_F(OutputDirTest, RefusesPathsThatCannotBeDirectories) {
  std::ofstream(tmp_ + "/file") << "x";
  EXPECT_THROW(OutputDir(tmp_ + "/file"), InputError);
  EXPECT_THROW(OutputDir(tmp_ + "/file/sub"), InputError);
}

}  // namespace
}  // namespace ddpbench::run
