// ab_command.cpp — see ab_command.h.
#include "cli/ab_command.h"

#include "cli/validators.h"

namespace ddpbench::cli {

CLI::App* add_ab_command(CLI::App& app, requests::AbRequest& r) {
  CLI::App* cmd = app.add_subcommand(
      "ab",
      "CI regression gate in one job: run the baseline build and this build alternately, in a "
      "random order per round, and decide on the paired rounds (docs/gate.md, \"A/B in one "
      "job\")");
  CLI::Option* baseline =
      cmd->add_option("--baseline-bin", r.baseline_binary,
                      "The baseline's ddpbench binary, or the build folder holding "
                      "harness/ddpbench (required unless --calibrate)");
  cmd->add_option("--current-bin", r.current_binary,
                  "The current ddpbench binary or build folder (default: this program)");
  cmd->add_option("--rounds", r.rounds,
                  "Rounds: each runs both builds once, back to back; 8 at least for a 99% "
                  "interval")
      ->check(integer_in(2, 1000))
      ->capture_default_str();
  cmd->add_flag("--duet", r.duet,
                "Run both builds of a round at the same time, sharing the machine, instead of "
                "back to back: a speed change of the machine hits both alike (docs/gate.md, \"Duet "
                "rounds\"); it sees extra work, not extra waiting");
  cmd->add_option("--seed", r.seed, "Seed of the order within each round")->capture_default_str();
  cmd->add_option("--max-slowdown", r.max_slowdown, "Allowed throughput loss, e.g. 0.05 = 5%")
      ->check(fraction_0_to_1("0.05 = 5% slower allowed"))
      ->capture_default_str();
  cmd->add_flag("--allow-undecided", r.allow_undecided,
                "Accept points too noisy to tell a slowdown from none (listed, not failed)");
  cmd->add_option("--format", r.format, "text or md")->check(CLI::IsMember({"text", "md"}));
  cmd->add_option("--out", r.out, "Folder for ab.json and every round's report")
      ->capture_default_str();
  CLI::Option* calibrate = cmd->add_flag(
      "--calibrate", r.calibrate,
      "A/A: run the current build against itself for --rounds rounds and report what a gate of "
      "--gate-rounds rounds can tell on this runner (false alarms, power), in calibration.json");
  calibrate->excludes(baseline);
  cmd->add_option("--gate-rounds", r.gate_rounds, "With --calibrate: the rounds the gate will use")
      ->check(integer_in(2, 1000))
      ->capture_default_str();
  cmd->add_option("--calibration", r.calibration,
                  "A calibration.json of this runner (ab --calibrate), printed with the verdict")
      ->excludes(calibrate);
  cmd->add_option("run_args", r.run_args,
                  "After --: the arguments of `run` both builds are given (e.g. --scenario "
                  "toy_cnn --modes ddp --gpus 2 --perf-only --steps 100)")
      ->required();
  return cmd;
}

}  // namespace ddpbench::cli
