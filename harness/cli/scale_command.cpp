// scale_command.cpp — see scale_command.h.
#include "cli/scale_command.h"

#include "cli/list_option.h"
#include "cli/run_flags.h"
#include "cli/validators.h"

namespace ddpbench::cli {

CLI::App* add_scale_command(CLI::App& app, run::ScaleRequest& r) {
  CLI::App* cmd = app.add_subcommand("scale", "Scaling sweep over world sizes (perf only)");
  add_shared_run_flags(*cmd, r.base);
  // One word per use (allow_extra_args): the words after the flags are KEY VALUE overrides.
  add_list_option(*cmd, "--gpus", r.world_sizes, "World sizes, e.g. 1,2,4,8", integer_at_least(1))
      ->allow_extra_args(false);
  add_list_option(*cmd, "--modes", r.modes,
                  "Modes to time at every world size: ddp, dp, zero (its memory per rank is "
                  "charted against K)",
                  CLI::IsMember({"ddp", "dp", "zero"}))
      ->allow_extra_args(false);
  return cmd;
}

}  // namespace ddpbench::cli
