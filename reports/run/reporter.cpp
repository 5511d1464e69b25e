// reporter.cpp — the name-based reporter factory.
#include "reports/run/reporter.h"

#include <fmt/format.h>

#include "errors.h"
#include "reports/run/console_reporter.h"
#include "reports/run/csv_reporter.h"
#include "reports/run/html_reporter.h"
#include "reports/run/json_reporter.h"
#include "reports/run/junit_reporter.h"
#include "reports/run/markdown_reporter.h"

namespace ddpbench::reports {

std::unique_ptr<Reporter> make_reporter(const std::string& name) {
  if (name == "json") return std::make_unique<JsonReporter>();
  if (name == "console") return std::make_unique<ConsoleReporter>();
  if (name == "csv") return std::make_unique<CsvReporter>();
  if (name == "junit") return std::make_unique<JunitReporter>();
  if (name == "markdown") return std::make_unique<MarkdownReporter>();
  if (name == "html") return std::make_unique<HtmlReporter>();
  throw InputError(fmt::format(
      "unknown report format '{}': known formats are json, console, csv, junit, markdown, html",
      name));
}

std::vector<std::unique_ptr<Reporter>> file_reporters() {
  std::vector<std::unique_ptr<Reporter>> out;
  for (const char* name : {"json", "csv", "junit", "markdown", "html"})
    out.push_back(make_reporter(name));
  return out;
}

}  // namespace ddpbench::reports
