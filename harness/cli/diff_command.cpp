// diff_command.cpp — see diff_command.h.
#include "cli/diff_command.h"

namespace ddpbench::cli {

CLI::App* add_diff_command(CLI::App& app, requests::DiffRequest& r) {
  CLI::App* cmd = app.add_subcommand(
      "diff",
      "What changed? Compare two runs of one experiment (each with --trace) tensor by tensor and "
      "name the first divergence");
  cmd->add_option("a", r.a, "Run folder (or trace.pt) A")->required();
  cmd->add_option("b", r.b, "Run folder (or trace.pt) B")->required();
  cmd->add_option_function<std::string>(
         "--expect",
         [&r](const std::string& name) {
           r.expect = name == "identical" ? requests::DiffExpectation::kIdentical
                                          : requests::DiffExpectation::kRounding;
         },
         "rounding: fail only on a divergence beyond rounding; identical: fail on any difference "
         "(bitwise reproducibility)")
      ->check(CLI::IsMember({"rounding", "identical"}))
      ->default_str("rounding");
  cmd->add_option("--out", r.out, "Output directory for diff.json, diff.txt and diff.html")
      ->capture_default_str();
  return cmd;
}

}  // namespace ddpbench::cli
