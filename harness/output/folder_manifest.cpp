// folder_manifest.cpp — see folder_manifest.h.
#include "output/folder_manifest.h"

#include <fstream>

namespace ddpbench::output {
namespace fs = std::filesystem;
namespace {

constexpr const char* kManifestHeader = "# ddpbench ";

// What an earlier ddpbench version wrote, for folders from before the manifest existed.
bool ddpbench_file_name(const std::string& name) {
  const auto starts = [&name](const char* p) { return name.rfind(p, 0) == 0; };
  const auto ends = [&name](const std::string& s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return name == "report.json" || name == "report.csv" || name == "report.junit.xml" ||
         name == "report.md" || name == "report.html" || name == "batches.pt" ||
         (starts("state_") && ends(".pt"));
}

}  // namespace

Manifest read_folder_manifest(const fs::path& dir) {
  Manifest m;
  const fs::path file = dir / kManifestFile;
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && ddpbench_file_name(name)) m.names.insert(name);
    }
    return m;
  }
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(kManifestHeader, 0) == 0) {
      m.command = line.substr(std::string(kManifestHeader).size());
      continue;
    }
    // Only plain names: a manifest must not make a run delete outside its folder.
    if (!line.empty() && line[0] != '#' && line.find('/') == std::string::npos && line != "." &&
        line != "..") {
      m.names.insert(line);
    }
  }
  return m;
}

void write_manifest(const fs::path& dir, const std::string& command,
                    const std::set<std::string>& names) {
  std::string text = kManifestHeader + command + "\n";
  for (const auto& name : names) text += name + "\n";
  std::ofstream(dir / kManifestFile, std::ios::trunc) << text;
}

std::string writer_of(const Manifest& m) {
  if (!m.command.empty()) return m.command;
  const auto& names = m.names;
  if (names.count("diff.json")) return "diff";
  if (names.count("history.csv")) return "history";
  if (names.count("comm.json")) return "comm";
  if (names.count("projection.json")) return "project";
  for (const auto& name : names) {
    if (saved_state(name) || name == "trace.pt" || name == "failure.json") return "run";
  }
  return "";
}

bool saved_state(const std::string& name) {
  return name == "batches.pt" || name.rfind("state_", 0) == 0 || name.rfind("checkpoint_", 0) == 0;
}

int loss_rank(const std::string& name) {
  if (name == "report.json") return 0;
  return saved_state(name) || name == "trace.pt" ? 1 : 2;
}

}  // namespace ddpbench::output
