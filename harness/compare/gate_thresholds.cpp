// gate_thresholds.cpp — see gate_thresholds.h.
#include "compare/gate_thresholds.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "errors.h"
#include "quoted_input.h"

namespace ddpbench::compare {
namespace {

double fraction(const YAML::Node& node, const std::string& what) {
  const double v = node.as<double>();
  if (!std::isfinite(v) || std::signbit(v) || v > 1) {  // -0 included
    throw InputError(
        fmt::format("{} is {}: give the allowed slowdown as a fraction from 0 to 1 "
                    "(0.05 = 5%)",
                    what, node.Scalar()));
  }
  return v;
}

// "scenario/mode/world_size", as the gate's table names points.
bool point_key(const std::string& key) {
  const size_t a = key.find('/');
  const size_t b = a == std::string::npos ? a : key.find('/', a + 1);
  if (b == std::string::npos || a == 0 || b == a + 1 || b + 1 >= key.size()) return false;
  return key.find_first_not_of("0123456789", b + 1) == std::string::npos;
}

// yaml-cpp keeps both entries of a repeated key, and which one wins would be an accident.
void require_new_key(std::set<std::string>& seen, const std::string& key, const char* where) {
  if (!seen.insert(key).second) {
    throw InputError(
        fmt::format("{} {} appears twice: give each key once", where, quoted_input(key)));
  }
}

}  // namespace

GateThresholds load_gate_thresholds(const std::string& path,
                                    std::optional<double> command_line_max_slowdown) {
  GateThresholds t;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(fmt::format(
        "--thresholds {}: {}; pass a YAML file such as ci/gate.yaml", quoted_input(path),
        std::filesystem::exists(path, ec) ? "is not a regular file" : "no such file"));
  }
  try {
    const YAML::Node doc = YAML::LoadFile(path);
    if (!doc.IsMap()) throw InputError("expected a mapping with max_slowdown and points");
    std::set<std::string> top_keys;
    for (const auto& kv : doc) {
      const std::string key = kv.first.as<std::string>();
      require_new_key(top_keys, key, "key");
      if (key == "max_slowdown") {
        t.max_slowdown = fraction(kv.second, "max_slowdown");
      } else if (key == "points") {
        if (!kv.second.IsMap()) throw InputError("points must map scenario/mode/world_size keys");
        std::set<std::string> point_keys;
        for (const auto& point : kv.second) {
          const std::string name = point.first.as<std::string>();
          require_new_key(point_keys, name, "point");
          if (!point_key(name)) {
            throw InputError(
                fmt::format("point {} is not scenario/mode/world_size (e.g. "
                            "toy_cnn/ddp/2)",
                            quoted_input(name)));
          }
          t.point_max_slowdown[name] = fraction(point.second, "point " + name);
        }
      } else {
        throw InputError(
            fmt::format("unknown key {}: the keys are max_slowdown and points", quoted_input(key)));
      }
    }
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("--thresholds {}: {}", quoted_input(path), e.what()));
  } catch (const InputError& e) {
    throw InputError(fmt::format("--thresholds {}: {}", quoted_input(path), e.what()));
  }
  if (command_line_max_slowdown) t.max_slowdown = *command_line_max_slowdown;
  return t;
}

}  // namespace ddpbench::compare
