// scale_command.cpp — see scale_command.h.
#include "cli/scale_command.h"

#include <string>
#include <vector>

#include "cli/list_option.h"
#include "cli/run_flags.h"
#include "cli/validators.h"
#include "reports/run/record_enums.h"

namespace ddpbench::cli {
namespace {

// Every mode but the single-device reference (which `scale` times once, as the baseline), from
// the one table of mode names.
std::vector<std::string> sweep_modes() {
  std::vector<std::string> names;
  for (const auto& [mode, name] : reports::EnumNames<reports::Mode>::kTable) {
    if (mode != reports::Mode::kSingle) names.emplace_back(name);
  }
  return names;
}

}  // namespace

CLI::App* add_scale_command(CLI::App& app, requests::ScaleRequest& r) {
  CLI::App* cmd = app.add_subcommand("scale", "Scaling sweep over world sizes (perf only)");
  add_shared_run_flags(*cmd, r.base);
  // One word per use (allow_extra_args): the words after the flags are KEY VALUE overrides.
  add_list_option(*cmd, "--gpus", r.world_sizes, "World sizes, e.g. 1,2,4,8", integer_at_least(1))
      ->allow_extra_args(false);
  add_list_option(*cmd, "--modes", r.modes,
                  "Modes to time at every world size: ddp, dp, zero (its memory per rank is "
                  "charted against K)",
                  CLI::IsMember(sweep_modes()))
      ->allow_extra_args(false);
  return cmd;
}

}  // namespace ddpbench::cli
