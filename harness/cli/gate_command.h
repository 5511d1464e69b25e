// gate_command.h — `ddpbench gate --baseline base.json --current cur.json [--max-slowdown F]
// [--thresholds ci/gate.yaml] [--format text|md]`: the CI regression gate (exit 1 on regression).
#pragma once

#include <CLI/App.hpp>
#include <string>

namespace ddpbench::cli {

struct GateCommandOptions {
  // The committed baseline report.json.
  std::string baseline;
  // The report.json of the run under test.
  std::string current;
  // Allowed fractional throughput loss per point (overridden per point by --thresholds).
  double max_slowdown = 0.05;
  // YAML with `max_slowdown:` and `points: {scenario/mode/world_size: fraction}`.
  std::string thresholds;
  // "text" or "md" (markdown table for CI job summaries).
  std::string format = "text";
};

CLI::App* add_gate_command(CLI::App& app, GateCommandOptions& options);
int run_gate_command(const GateCommandOptions& options);

}  // namespace ddpbench::cli
