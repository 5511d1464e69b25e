// write_projection.cpp — see write_projection.h.
#include "output/write_projection.h"

#include <fmt/format.h>

#include "quoted_input.h"
#include "reports/projection/projection_reporters.h"

namespace ddpbench::output {

void write_projection(const reports::ProjectionReport& report, OutputDir& out) {
  // Rendered in full before the first file is staged (as write_reports does): a renderer that
  // fails leaves no temporary behind.
  const std::string json = reports::projection_json(report);
  const std::string csv = reports::projection_csv(report);
  const std::string html = reports::projection_html(report);
  out.stage(kProjectionFiles[0], json);
  out.stage(kProjectionFiles[1], csv);
  out.stage(kProjectionFiles[2], html);
  out.commit();
  fmt::print("{}", reports::projection_console(report));
  // The path is the user's --out as typed: control bytes in it must not drive the terminal.
  fmt::print("wrote {}/projection.{{json,csv,html}}\n", printable_message(out.path()));
}

}  // namespace ddpbench::output
