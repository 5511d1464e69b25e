// report_file.cpp — see report_file.h.
#include "run/report_file.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "errors.h"
#include "reports/json_reporter.h"

namespace ddpbench::run {

reports::RunReport read_report_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open the report for reading", path));
  try {
    return reports::report_from_json(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON ({})", path, e.what()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace ddpbench::run
