// script_test_models.h — the TorchScript files the --model tests load, written by the suite's
// Python (tests/support/script_test_models.py lists them) so that they match the linked libtorch.
#pragma once

#include <string>

namespace ddpbench::testing {

enum class ScriptTestModels {
  kSmall,  // the small files: the ScriptModel unit tests and the refusals
  kZoo,    // torchvision's mobilenet_v2 and resnet18, a transformer, an unused branch
  kFloor,  // the models that ask most of the tolerance model (shufflenet, mnasnet, noise, ...)
};

// The folder holding the files, made once per build folder and content of the scripts and
// Python (every test process of a suite run shares it: ~2 s of Python each otherwise); read it,
// never write or remove it. Throws std::runtime_error with Python's stderr when the script fails.
std::string make_script_test_models(ScriptTestModels which = ScriptTestModels::kSmall);

}  // namespace ddpbench::testing
