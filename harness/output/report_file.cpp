// report_file.cpp — see report_file.h.
#include "output/report_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "errors.h"
#include "quoted_input.h"
#include "reports/json_report_reader.h"

namespace ddpbench::output {
namespace fs = std::filesystem;

namespace {

// One verdict everywhere: every check's status is one the reporters know, and `passed` says
// exactly whether one of them failed.
void check_verdict(const reports::RunReport& report) {
  bool any_failed = false;
  for (const auto& mode : report.results) {
    for (const auto& c : mode.checks) {
      if (c.status != "pass" && c.status != "fail" && c.status != "expected_divergence") {
        throw InputError(
            fmt::format("check {} of mode {} has status {}; known statuses are pass, fail, "
                        "expected_divergence (was the file edited?)",
                        quoted_input(c.name), quoted_input(mode.mode), quoted_input(c.status)));
      }
      any_failed = any_failed || c.status == "fail";
    }
  }
  if (report.passed == any_failed) {
    throw InputError(fmt::format(
        "\"passed\" is {} but {} check failed: the verdict contradicts the checks (was the file "
        "edited?); re-run, or correct the file",
        report.passed, any_failed ? "a" : "no"));
  }
}

// `path` itself, or the report.json inside it when it is a run's folder.
std::string report_file_path(const std::string& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    const std::string inside = (fs::path(path) / "report.json").string();
    if (!fs::is_regular_file(inside, ec)) {
      throw InputError(
          fmt::format("{} is a folder without a report.json: pass a report.json or "
                      "the --out folder of a run",
                      quoted_input(path)));
    }
    return inside;
  }
  if (!fs::exists(path, ec)) {
    throw InputError(fmt::format("{}: no such file: pass a report.json written by ddpbench",
                                 quoted_input(path)));
  }
  if (!fs::is_regular_file(path, ec)) {
    throw InputError(
        fmt::format("{} is not a regular file: pass a report.json written by "
                    "ddpbench",
                    quoted_input(path)));
  }
  return path;
}

}  // namespace

ReportFile load_report_file(const std::string& given) {
  ReportFile f;
  f.path = report_file_path(given);
  const std::string& path = f.path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(fmt::format("{}: cannot open the report for reading ({})", quoted_input(path),
                                 std::strerror(errno)));
  }
  f.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  try {
    f.report = reports::report_from_json(nlohmann::json::parse(f.bytes));
    check_verdict(f.report);
    return f;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not a valid report ({})", quoted_input(path), e.what()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", quoted_input(path), e.what()));
  }
}

reports::RunReport read_report_file(const std::string& path) {
  return load_report_file(path).report;
}

}  // namespace ddpbench::output
