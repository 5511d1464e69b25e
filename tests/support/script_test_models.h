// script_test_models.h — the TorchScript files the --model tests load, written by the suite's
// Python (tests/support/script_test_models.py lists them) so that they match the linked libtorch.
#pragma once

#include <string>

namespace ddpbench::testing {

enum class ScriptTestModels {
  kSmall,  // the small files: the ScriptModel unit tests and the refusals
  kZoo,    // torchvision's mobilenet_v2 and resnet18, a transformer, an unused branch
};

// A fresh folder holding the files; the caller removes it. Throws std::runtime_error with
// Python's stderr when the script fails.
std::string make_script_test_models(ScriptTestModels which = ScriptTestModels::kSmall);

}  // namespace ddpbench::testing
