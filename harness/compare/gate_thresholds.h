// gate_thresholds.h — the gate's thresholds from a YAML file (see ci/gate.yaml): `max_slowdown:`
// for every point and `points: {scenario/mode/world_size: fraction}` overrides.
#pragma once

#include <optional>
#include <string>

#include "compare/regression_gate.h"

namespace ddpbench::compare {

// The file's thresholds; a `command_line_max_slowdown` (--max-slowdown) wins over the file's
// top-level max_slowdown, and without either it is 0.05. Throws InputError naming the file and
// key for a path that is not a regular file, unreadable YAML, unknown or repeated keys, fractions
// outside [0, 1] and point keys that are not scenario/mode/world_size.
GateThresholds load_gate_thresholds(const std::string& path,
                                    std::optional<double> command_line_max_slowdown);

}  // namespace ddpbench::compare
