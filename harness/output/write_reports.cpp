// write_reports.cpp — see write_reports.h.
#include "output/write_reports.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>
#include <vector>

#include "launch/signal_cleanup.h"
#include "quoted_input.h"
#include "reports/run/console_reporter.h"
#include "reports/run/reporter.h"

namespace ddpbench::output {

std::vector<std::string> report_file_names(const ReportJson& json) {
  std::vector<std::string> names;
  for (const auto& reporter : reports::file_reporters()) {
    const std::string name = reporter->file_name();
    if (name != "report.json" || json.how != ReportJson::How::kLeave) names.push_back(name);
  }
  return names;
}

void write_reports(const reports::RunReport& report, OutputDir& out, const std::string& also_wrote,
                   const ReportJson& json) {
  // Every format is rendered before the first is staged: a reporter that throws (or worse)
  // then leaves no temporary behind in --out, whatever the staging code does on its error paths.
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> extensions;
  for (const auto& reporter : reports::file_reporters()) {
    const std::string name = reporter->file_name();
    if (name == "report.json" && json.how != ReportJson::How::kRender) {
      if (json.how == ReportJson::How::kLeave) continue;
      files.emplace_back(name, json.bytes);
    } else {
      files.emplace_back(name, reporter->render(report));
    }
    extensions.push_back(name.substr(name.find('.') + 1));
  }
  for (const auto& [name, bytes] : files) out.stage(name, bytes);
  out.commit();
  launch::SignalCleanup::test_hook_after_commit();
  fmt::print("\n{}", reports::ConsoleReporter().render(report));
  // The path is the user's --out as typed: control bytes in it must not drive the terminal.
  fmt::print("wrote {}/report.{{{}}}{}\n", printable_message(out.path()),
             fmt::join(extensions, ","), also_wrote);
}

}  // namespace ddpbench::output
