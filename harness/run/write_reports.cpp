// write_reports.cpp — see write_reports.h.
#include "run/write_reports.h"

#include <fmt/format.h>

#include "reports/console_reporter.h"
#include "reports/reporter.h"

namespace ddpbench::run {

void write_reports(const reports::RunReport& report, OutputDir& out,
                   const std::string& also_wrote) {
  for (const auto& reporter : reports::file_reporters()) {
    out.stage(reporter->file_name(), reporter->render(report));
  }
  out.commit();
  fmt::print("\n{}", reports::ConsoleReporter().render(report));
  fmt::print("wrote {}/report.{{json,csv,junit.xml,md,html}}{}\n", out.path(), also_wrote);
}

}  // namespace ddpbench::run
