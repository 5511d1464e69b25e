// gate_thresholds.cpp — see gate_thresholds.h.
#include "compare/gate_thresholds.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "errors.h"

namespace ddpbench::compare {

GateThresholds load_gate_thresholds(const std::string& path, double max_slowdown) {
  GateThresholds t;
  t.max_slowdown = max_slowdown;
  try {
    const YAML::Node doc = YAML::LoadFile(path);
    if (doc["max_slowdown"]) t.max_slowdown = doc["max_slowdown"].as<double>();
    if (doc["points"]) {
      for (const auto& kv : doc["points"]) {
        t.point_max_slowdown[kv.first.as<std::string>()] = kv.second.as<double>();
      }
    }
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("--thresholds {}: {}", path, e.what()));
  }
  return t;
}

}  // namespace ddpbench::compare
