// file_contents.h — a file's bytes, and every file under a folder with its bytes: what the e2e
// tests compare before and after a command that must leave them unchanged.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

namespace ddpbench::testing {

inline std::string slurp(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::map<std::string, std::string> folder_contents(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) files[e.path().string()] = slurp(e.path().string());
  }
  return files;
}

}  // namespace ddpbench::testing
