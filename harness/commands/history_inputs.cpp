// history_inputs.cpp — see history_inputs.h.
#include "commands/history_inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "errors.h"
#include "output/report_file.h"
#include "quoted_input.h"

namespace ddpbench::commands {
namespace {

namespace fs = std::filesystem;

bool is_run_folder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec) && fs::exists(p / "report.json", ec);
}

// The folder of a run whose ranks failed: failure.json, no report (Note [A folder without a
// report]).
bool is_failed_run_folder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec) && !fs::exists(p / "report.json", ec) &&
         fs::exists(p / "failure.json", ec);
}

// A folder of runs: its run folders and .json files, by name; its failed runs' folders are
// listed in `failed`.
std::vector<std::string> runs_in(const fs::path& dir, std::vector<std::string>& failed) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (is_failed_run_folder(e.path())) {
      failed.push_back(e.path().filename().string());
    } else if (is_run_folder(e.path()) || e.path().extension() == ".json") {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  std::sort(failed.begin(), failed.end());
  return out;
}

std::vector<std::string> runs_listed(const std::string& order_file, const fs::path& base,
                                     const std::string& command) {
  std::ifstream in(order_file);
  if (!in) {
    throw InputError(
        fmt::format("{} --order {}: cannot read it; pass a file that lists the runs, "
                    "one per line, oldest first",
                    command, quoted_input(order_file)));
  }
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const fs::path p(line);
    out.push_back(p.is_absolute() ? line : (base / p).string());
  }
  return out;
}

std::string label_of(const fs::path& p) {
  if (p.filename() == "report.json") return p.parent_path().filename().string();
  return p.extension() == ".json" ? p.stem().string() : p.filename().string();
}

}  // namespace

std::vector<compare::LabelledReport> load_history(const std::vector<std::string>& runs,
                                                  const std::string& order_file,
                                                  const std::string& command,
                                                  std::vector<std::string>* left_out) {
  std::vector<std::string> paths = runs;
  // One folder that is no run's, finished or failed: a folder of runs.
  const bool one_folder = runs.size() == 1 && fs::is_directory(runs[0]) &&
                          !is_run_folder(runs[0]) && !is_failed_run_folder(runs[0]);
  if (!order_file.empty()) {
    paths = runs_listed(order_file, one_folder ? fs::path(runs[0]) : fs::current_path(), command);
  } else if (one_folder) {
    std::vector<std::string> failed;
    paths = runs_in(runs[0], failed);
    for (const std::string& name : failed) {
      if (left_out != nullptr) {
        left_out->push_back(fmt::format(
            "left out {}: its run failed (failure.json, no report.json)", quoted_input(name)));
      }
    }
  }
  if (paths.empty()) {
    throw InputError(fmt::format(
        "{}: no runs found: pass run folders or report.json files of successive commits (oldest "
        "first), a folder of them, or --order FILE",
        command));
  }
  std::vector<compare::LabelledReport> out;
  for (const std::string& path : paths) {
    const fs::path p(path);
    std::error_code ec;
    // A failed run's folder, or one no run finished into, is named as such (output/report_file.h).
    const std::string why = output::why_no_results(path);
    if (!why.empty()) throw InputError(fmt::format("{}: {}", command, why));
    if (!fs::exists(p, ec)) {
      throw InputError(fmt::format(
          "{}: {} does not exist: pass run folders or report.json files of successive commits "
          "(oldest first), a folder of them, or --order FILE",
          command, quoted_input(path)));
    }
    const std::string report = is_run_folder(p) ? (p / "report.json").string() : path;
    out.push_back({label_of(p), output::read_report_file(report)});
  }
  return out;
}

}  // namespace ddpbench::commands
