// write_projection.cpp — see write_projection.h.
#include "output/write_projection.h"

#include <fmt/format.h>

#include "quoted_input.h"
#include "reports/projection_reporters.h"

namespace ddpbench::output {

void write_projection(const reports::ProjectionReport& report, OutputDir& out) {
  out.stage("projection.json", reports::projection_json(report));
  out.stage("projection.csv", reports::projection_csv(report));
  out.stage("projection.html", reports::projection_html(report));
  out.commit();
  fmt::print("{}", reports::projection_console(report));
  // The path is the user's --out as typed: control bytes in it must not drive the terminal.
  fmt::print("wrote {}/projection.{{json,csv,html}}\n", printable_message(out.path()));
}

}  // namespace ddpbench::output
