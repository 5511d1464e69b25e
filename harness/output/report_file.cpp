// report_file.cpp — see report_file.h.
#include "output/report_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "compare/report_audit.h"
#include "errors.h"
#include "quoted_input.h"
#include "reports/json_report_reader.h"

namespace ddpbench::output {
namespace fs = std::filesystem;

namespace {

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
    // report_from_json recomputes every status and the verdict (reports/verdict.h).
    f.report = reports::report_from_json(nlohmann::json::parse(f.bytes));
    // ... and the limits, the check set and the loss check its configuration gives.
    compare::audit_report(f.report);
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
