// cli_e2e_fixture.h — the fixture of the CliE2E suite, whose tests sit in two files
// (e2e/cli_e2e_test.cpp, e2e/cli_bad_input_e2e_test.cpp): gtest runs a suite's tests only where
// they share one fixture class, so it is declared once, here.
#pragma once

#include "support/temp_dir_test.h"

namespace ddpbench {

class CliE2E : public testing::TempDirTest {};

}  // namespace ddpbench
