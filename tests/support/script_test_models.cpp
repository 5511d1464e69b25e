// script_test_models.cpp — see script_test_models.h.
#include "support/script_test_models.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace ddpbench::testing {

std::string make_script_test_models(ScriptTestModels which) {
  const std::string dir = make_temp_dir("script-models");
  std::vector<std::string> command = {
      kPython, std::string(kSourceDir) + "/tests/support/script_test_models.py", dir};
  if (which == ScriptTestModels::kZoo) command.push_back("--zoo");
  const auto r = run_process(command);
  if (r.exit_code != 0) {
    throw std::runtime_error("tests/support/script_test_models.py failed: " + r.err);
  }
  return dir;
}

}  // namespace ddpbench::testing
