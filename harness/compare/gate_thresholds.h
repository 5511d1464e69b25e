// gate_thresholds.h — the gate's thresholds from a YAML file (see ci/gate.yaml): `max_slowdown:`
// for every point and `points: {scenario/mode/world_size: fraction}` overrides.
#pragma once

#include <string>

#include "compare/regression_gate.h"

namespace ddpbench::compare {

// Starts from `max_slowdown`; a file's top-level max_slowdown replaces it. Throws InputError
// naming the file for unreadable or malformed YAML.
GateThresholds load_gate_thresholds(const std::string& path, double max_slowdown);

}  // namespace ddpbench::compare
