// script_test_models.h — the TorchScript files the --model tests load, written by the suite's
// Python (tests/support/script_test_models.py lists them) so that they match the linked libtorch.
#pragma once

#include <string>

namespace ddpbench::testing {

// A fresh folder holding the files; the caller removes it. Throws std::runtime_error with
// Python's stderr when the script fails.
std::string make_script_test_models();

}  // namespace ddpbench::testing
