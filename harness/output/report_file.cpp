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
#include "reports/run/json_report_reader.h"

namespace ddpbench::output {
namespace fs = std::filesystem;

namespace {

// The headline of what failure.json says (its "failure"), cut to a length one line can carry.
std::string failure_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string message;
  try {
    message = nlohmann::json::parse(in).at("failure").get<std::string>();
  } catch (const std::exception&) {
    return "";
  }
  message = message.substr(0, message.find('\n'));
  // Its headline: which rank stopped, where. The rank's stderr and the flight recorder's finding
  // follow in failure.json itself.
  for (const char* detail : {"; its stderr ends", "; flight recorder"}) {
    message = message.substr(0, message.find(detail));
  }
  return message.size() > 160 ? message.substr(0, 157) + "..." : message;
}

}  // namespace

// Note [A folder without a report]
// A run writes its folder only at its end, whole: a run whose ranks failed (exit 3) leaves
// failure.json alone there, and a run that was interrupted, or that failed (exit 3) before its
// ranks started, leaves no folder at all. Handed such a folder, `report`, `gate`, `history` and
// `diff` said "no such file" of a report.json nobody asked for by name; they say what the folder
// is instead (a failed run, with its failure; a folder no run finished into; a path that does not
// exist, with what leaves none) and what to do. A FAILed run (exit 1) has its report.
std::string why_no_results(const std::string& given) {
  std::error_code ec;
  fs::path dir(given);
  const auto does_not_exist = [](const fs::path& p) {
    return fmt::format(
        "{} does not exist: no run finished into it (a run that is interrupted, or that fails "
        "before its ranks start, leaves no folder); pass a report.json or the --out folder of a "
        "finished run",
        quoted_input(p.string()));
  };
  if (!fs::exists(dir, ec)) {
    // DIR/report.json or DIR/trace.pt, the files a run writes: what DIR is says why it is missing.
    const std::string name = dir.filename().string();
    if (name != "report.json" && name != "trace.pt") {
      return dir.has_extension() ? "" : does_not_exist(dir);  // a file: "no such file" says it
    }
    dir = dir.parent_path();
    if (dir.empty()) return "";
    if (!fs::exists(dir, ec)) return does_not_exist(dir);
  }
  if (!fs::is_directory(dir, ec) || fs::exists(dir / "report.json", ec)) return "";
  if (fs::is_regular_file(dir / "failure.json", ec)) {
    const std::string failure = failure_of(dir / "failure.json");
    return fmt::format(
        "{} holds no report.json but the failure.json of a run that failed (exit 3{}{}): fix what "
        "failed and re-run it",
        quoted_input(dir.string()), failure.empty() ? "" : ": ", failure);
  }
  return fmt::format(
      "{} is a folder without a report.json: no run finished into it (a run that is interrupted, "
      "or that fails before its ranks start, writes nothing there); pass a report.json or the "
      "--out folder of a finished run",
      quoted_input(dir.string()));
}

std::string report_json_path(const std::string& path) {
  const std::string why = why_no_results(path);
  if (!why.empty()) throw InputError(why);
  std::error_code ec;
  if (fs::is_directory(path, ec)) return (fs::path(path) / "report.json").string();
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

ReportFile load_report_file(const std::string& given) {
  ReportFile f;
  f.path = report_json_path(given);
  const std::string& path = f.path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError(fmt::format("{}: cannot open the report for reading ({})", quoted_input(path),
                                 std::strerror(errno)));
  }
  f.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  try {
    // report_from_json recomputes every status and the verdict (reports/run/verdict.h).
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
