// reporter.cpp — the name-based reporter factory.
#include "reports/reporter.h"

#include <fmt/format.h>

#include "errors.h"
#include "reports/console_reporter.h"
#include "reports/json_reporter.h"

namespace ddpbench::reports {

std::unique_ptr<Reporter> make_reporter(const std::string& name) {
  if (name == "json") return std::make_unique<JsonReporter>();
  if (name == "console") return std::make_unique<ConsoleReporter>();
  throw InputError(
      fmt::format("unknown report format '{}': known formats are json, console", name));
}

}  // namespace ddpbench::reports
