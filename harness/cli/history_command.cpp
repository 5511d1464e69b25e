// history_command.cpp — see history_command.h.
#include "cli/history_command.h"

#include "cli/validators.h"

namespace ddpbench::cli {

CLI::App* add_history_command(CLI::App& app, requests::HistoryRequest& r) {
  CLI::App* cmd = app.add_subcommand(
      "history",
      "A series of runs of successive commits: per point the trend, change points and a status "
      "(regression, suspicious, insufficient data, ok)");
  cmd->add_option("runs", r.runs,
                  "Run folders or report.json files, oldest first, or one folder of them (taken "
                  "in name order)");
  cmd->add_option("--order", r.order,
                  "A file listing the runs, one per line, oldest first (relative to the one "
                  "folder given, else to the current directory)");
  cmd->add_option("--max-slowdown", r.max_slowdown,
                  "Allowed throughput loss against the lookback, e.g. 0.05 = 5%")
      ->check(fraction_0_to_1("0.05 = 5% slower allowed"))
      ->capture_default_str();
  cmd->add_option("--lookback", r.lookback,
                  "Earlier commits (not slower themselves) each commit is judged against")
      ->check(integer_in(1, 1000))
      ->capture_default_str();
  cmd->add_option("--out", r.out, "Output directory for history.txt, history.csv, history.html")
      ->capture_default_str();
  return cmd;
}

}  // namespace ddpbench::cli
