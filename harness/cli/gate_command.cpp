// gate_command.cpp — see gate_command.h.
#include "cli/gate_command.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "cli/report_file.h"
#include "compare/regression_gate.h"
#include "errors.h"

namespace ddpbench::cli {
namespace {

compare::GateThresholds load_thresholds(const GateCommandOptions& o) {
  compare::GateThresholds t;
  t.max_slowdown = o.max_slowdown;
  if (o.thresholds.empty()) return t;
  try {
    const YAML::Node doc = YAML::LoadFile(o.thresholds);
    if (doc["max_slowdown"]) t.max_slowdown = doc["max_slowdown"].as<double>();
    if (doc["points"]) {
      for (const auto& kv : doc["points"]) {
        t.point_max_slowdown[kv.first.as<std::string>()] = kv.second.as<double>();
      }
    }
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("--thresholds {}: {}", o.thresholds, e.what()));
  }
  return t;
}

std::string render(const compare::GateResult& g, bool markdown) {
  std::string out;
  if (markdown) {
    out =
        "| point | baseline samples/s | current samples/s | delta | verdict "
        "|\n|---|---:|---:|---:|---|\n";
  } else {
    out = fmt::format("{:<36} {:>14} {:>14} {:>8}  {}\n", "point", "baseline/s", "current/s",
                      "delta", "verdict");
  }
  for (const auto& p : g.points) {
    const std::string verdict = p.detail.empty() ? p.verdict : p.verdict + ": " + p.detail;
    const std::string delta = fmt::format("{:+.1f}%", 100 * p.delta);
    out += markdown
               ? fmt::format("| {} | {:.1f} | {:.1f} | {} | {} |\n", p.key,
                             p.baseline_samples_per_s, p.current_samples_per_s, delta, verdict)
               : fmt::format("{:<36} {:>14.1f} {:>14.1f} {:>8}  {}\n", p.key,
                             p.baseline_samples_per_s, p.current_samples_per_s, delta, verdict);
  }
  return out + (g.passed ? "\ngate: PASS\n" : "\ngate: FAIL\n");
}

}  // namespace

CLI::App* add_gate_command(CLI::App& app, GateCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("gate", "CI regression gate: compare a run with a baseline");
  cmd->add_option("--baseline", o.baseline, "Baseline report.json")->required();
  cmd->add_option("--current", o.current, "Current report.json")->required();
  cmd->add_option("--max-slowdown", o.max_slowdown, "Allowed throughput loss, e.g. 0.05 = 5%")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--thresholds", o.thresholds, "YAML thresholds (see ci/gate.yaml)");
  cmd->add_option("--format", o.format, "text or md")->check(CLI::IsMember({"text", "md"}));
  return cmd;
}

int run_gate_command(const GateCommandOptions& o) {
  const compare::GateResult g = compare::run_gate(read_report_file(o.baseline),
                                                  read_report_file(o.current), load_thresholds(o));
  fmt::print("{}", render(g, o.format == "md"));
  return g.passed ? kExitOk : kExitCheckFailed;
}

}  // namespace ddpbench::cli
