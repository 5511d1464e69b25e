// write_reports.cpp — see write_reports.h.
#include "output/write_reports.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "launch/signal_cleanup.h"
#include "quoted_input.h"
#include "reports/console_reporter.h"
#include "reports/reporter.h"

namespace ddpbench::output {

void write_reports(const reports::RunReport& report, OutputDir& out, const std::string& also_wrote,
                   const ReportJson& json) {
  std::vector<std::string> extensions;
  for (const auto& reporter : reports::file_reporters()) {
    const std::string name = reporter->file_name();
    if (name == "report.json" && json.how != ReportJson::How::kRender) {
      if (json.how == ReportJson::How::kLeave) continue;
      out.stage(name, json.bytes);
    } else {
      out.stage(name, reporter->render(report));
    }
    extensions.push_back(name.substr(name.find('.') + 1));
  }
  out.commit();
  launch::SignalCleanup::test_hook_after_commit();
  fmt::print("\n{}", reports::ConsoleReporter().render(report));
  // The path is the user's --out as typed: control bytes in it must not drive the terminal.
  fmt::print("wrote {}/report.{{{}}}{}\n", printable_message(out.path()),
             fmt::join(extensions, ","), also_wrote);
}

}  // namespace ddpbench::output
