// execute_project.cpp — see execute_project.h.
#include "commands/execute_project.h"

#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "errors.h"
#include "output/output_dir.h"
#include "output/report_file.h"
#include "output/write_projection.h"
#include "projection/scaling_projection.h"
#include "quoted_input.h"

namespace ddpbench::commands {
namespace fs = std::filesystem;

int execute_project(const requests::ProjectRequest& request) {
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
  // Into the input's own folder, the projection is added beside the report (as `report` adds its
  // renderings); any other --out is owned as a run owns its folder. Owning the input's folder
  // would remove the run's files at commit.
  std::string input_dir = fs::path(file.path).parent_path().string();
  if (input_dir.empty()) input_dir = ".";
  std::error_code ec;
  const bool own_folder = fs::equivalent(request.out, input_dir, ec);
  output::OutputDir out(
      request.out, own_folder ? output::OutputPolicy::kAddFiles : output::OutputPolicy::kOwnFolder,
      "project");
  // Another run's report.json or state files in --out are refused, never removed (Note
  // [Rendering never destroys results], output_dir.h); an earlier projection is replaced.
  out.refuse_to_replace_results("project", output::kProjectionFiles);
  output::write_projection(projection, out);
  return kExitOk;
}

}  // namespace ddpbench::commands
