// gate_command.cpp — see gate_command.h.
#include "cli/gate_command.h"

#include "cli/validators.h"

namespace ddpbench::cli {

CLI::App* add_gate_command(CLI::App& app, requests::GateRequest& r) {
  CLI::App* cmd = app.add_subcommand("gate", "CI regression gate: compare a run with a baseline");
  CLI::Option* baseline = cmd->add_option("--baseline", r.baseline, "Baseline report.json");
  cmd->add_option("--history", r.history,
                  "Instead of --baseline: a folder of runs of earlier commits (as `history` "
                  "takes it); the newest is the baseline of the checks, and the throughput is "
                  "judged against the lookback distribution of their repeats")
      ->excludes(baseline);
  cmd->add_option("--order", r.order, "With --history: the file listing its runs, oldest first");
  cmd->add_option("--lookback", r.lookback, "With --history: the earlier commits to pool")
      ->check(integer_in(1, 1000))
      ->capture_default_str();
  cmd->add_option("--current", r.current, "Current report.json")->required();
  cmd->add_option("--max-slowdown", r.max_slowdown, "Allowed throughput loss, e.g. 0.05 = 5%")
      ->check(fraction_0_to_1("0.05 = 5% slower allowed"))
      ->default_str("0.05, or the --thresholds file's");
  cmd->add_flag("--allow-missing", r.allow_missing,
                "Accept checks or timings the baseline had and the current run lacks (listed, "
                "not failed)");
  cmd->add_flag("--allow-undecided", r.allow_undecided,
                "Accept points whose repeats are too noisy to tell a slowdown from none (listed, "
                "not failed)");
  cmd->add_option("--thresholds", r.thresholds, "YAML thresholds (see ci/gate.yaml)");
  cmd->add_option("--format", r.format, "text or md")->check(CLI::IsMember({"text", "md"}));
  return cmd;
}

}  // namespace ddpbench::cli
