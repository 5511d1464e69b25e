// execute_project.cpp — see execute_project.h.
#include "run/execute_project.h"

#include <fmt/format.h>

#include <optional>

#include "errors.h"
#include "output/output_dir.h"
#include "output/report_file.h"
#include "output/write_projection.h"
#include "projection/scaling_projection.h"
#include "quoted_input.h"

namespace ddpbench::run {

int execute_project(const ProjectRequest& request) {
  const std::optional<projection::AllreduceAlgo> algo = projection::algo_from_name(request.algo);
  if (!algo) {
    throw InputError(fmt::format("project --algo {}: unknown algorithm; use ring or tree",
                                 quoted_input(request.algo)));
  }
  const output::ReportFile file = output::load_report_file(request.from);
  projection::ProjectionOptions options;
  options.source = file.path;
  options.devices = request.devices;
  options.link_gbit_s = request.link_gbit_s;
  options.algo = *algo;
  options.alpha_s = request.alpha_us * 1e-6;
  // Every refusal happens here, before the output folder exists.
  const reports::ProjectionReport projection = projection::project_scaling(file.report, options);
  output::OutputDir out(request.out);
  output::write_projection(projection, out);
  return kExitOk;
}

}  // namespace ddpbench::run
