// temp_dir_test.h — a gtest fixture owning a fresh temporary directory per test.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/subprocess.h"

namespace ddpbench::testing {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override { tmp_ = make_temp_dir("test"); }
  void TearDown() override { std::filesystem::remove_all(tmp_); }
  // A path inside the temporary directory (not created).
  std::string path(const std::string& name) const { return tmp_ + "/" + name; }
  std::string tmp_;
};

}  // namespace ddpbench::testing
