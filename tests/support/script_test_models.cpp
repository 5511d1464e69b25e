// script_test_models.cpp — see script_test_models.h.
#include "support/script_test_models.h"

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/subprocess.h"
#include "support/test_paths.h"

namespace ddpbench::testing {

namespace {

namespace fs = std::filesystem;

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The script's flag for the set (also part of the folder's key).
std::string flag_of(ScriptTestModels which) {
  switch (which) {
    case ScriptTestModels::kZoo:
      return "--zoo";
    case ScriptTestModels::kFloor:
      return "--floor";
    case ScriptTestModels::kSmall:
      break;
  }
  return "small";
}

// FNV-1a over what the files depend on: the scripts that write them and the Python (its torch
// writes them), so an edit to either makes a new folder rather than reusing a stale one.
std::string content_key(ScriptTestModels which) {
  const std::string source = std::string(kSourceDir);
  const std::string text = file_text(source + "/tests/support/script_test_models.py") +
                           file_text(source + "/reference/script_model.py") + kPython +
                           flag_of(which);
  uint64_t h = 1469598103934665603ULL;
  for (const unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  std::ostringstream hex;
  hex << std::hex << h;
  return hex.str();
}

}  // namespace

std::string make_script_test_models(ScriptTestModels which) {
  const fs::path cache = fs::path(kBinaryDir) / "tests" / "script-models" / content_key(which);
  if (fs::exists(cache / "complete")) return cache.string();
  // Written beside the cache and renamed into place whole, so a test process running at the same
  // time sees either no folder or a complete one; the loser of a race drops its copy.
  fs::create_directories(cache.parent_path());
  const fs::path partial = cache.string() + ".partial-" + std::to_string(::getpid());
  fs::remove_all(partial);
  fs::create_directories(partial);
  std::vector<std::string> command = {
      kPython, std::string(kSourceDir) + "/tests/support/script_test_models.py", partial.string()};
  if (which != ScriptTestModels::kSmall) command.push_back(flag_of(which));
  const auto r = run_process(command);
  if (r.exit_code != 0) {
    fs::remove_all(partial);
    throw std::runtime_error("tests/support/script_test_models.py failed: " + r.err);
  }
  std::ofstream(partial / "complete") << "written by tests/support/script_test_models.py\n";
  std::error_code ec;
  fs::rename(partial, cache, ec);
  if (ec) fs::remove_all(partial);  // another process put its folder there first
  return cache.string();
}

}  // namespace ddpbench::testing
