// run_command.cpp — see run_command.h.
#include "cli/run_command.h"

#include "cli/run_flags.h"

namespace ddpbench::cli {

CLI::App* add_run_command(CLI::App& app, requests::RunRequest& request) {
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Train a scenario in the selected modes and compare them with single-device training "
      "(default: single, dp and ddp)");
  add_run_flags(*cmd, request);
  return cmd;
}

}  // namespace ddpbench::cli
