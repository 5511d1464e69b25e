// regression_gate.cpp — see regression_gate.h.
#include "compare/regression_gate.h"

#include <fmt/format.h>

#include "errors.h"

namespace ddpbench::compare {
namespace {

std::string key_of(const reports::RunConfig& c, const reports::ModeResult& r) {
  return fmt::format("{}/{}/{}", c.scenario, r.mode, r.world_size);
}

void require_same(const std::string& field, const std::string& base, const std::string& cur) {
  if (base != cur) {
    throw InputError(fmt::format(
        "gate: baseline and current runs differ in {} ('{}' vs '{}'); regenerate the baseline "
        "with the current configuration",
        field, base, cur));
  }
}

const reports::ModeResult* find(const reports::RunReport& r, const std::string& key) {
  for (const auto& m : r.results) {
    if (key_of(r.config, m) == key) return &m;
  }
  return nullptr;
}

}  // namespace

GateResult run_gate(const reports::RunReport& baseline, const reports::RunReport& current,
                    const GateThresholds& thresholds) {
  require_same("scenario", baseline.config.scenario, current.config.scenario);
  require_same("dtype", baseline.config.dtype, current.config.dtype);
  require_same("global batch", std::to_string(baseline.config.global_batch),
               std::to_string(current.config.global_batch));
  GateResult g;
  for (const auto& base : baseline.results) {
    const std::string key = key_of(baseline.config, base);
    GatePoint p;
    p.key = key;
    p.baseline_samples_per_s = base.throughput.samples_per_s;
    const reports::ModeResult* cur = find(current, key);
    if (cur == nullptr) {
      p.verdict = "missing";
      p.detail = "the current run has no such point";
      g.points.push_back(p);
      g.passed = false;
      continue;
    }
    require_same(key + " backend", base.backend, cur->backend);
    p.current_samples_per_s = cur->throughput.samples_per_s;
    p.verdict = "ok";
    for (const auto& c : cur->checks) {
      if (c.status == "fail") {
        p.verdict = "check failed";
        p.detail = fmt::format("{}: {}", c.name, c.detail);
        break;
      }
      for (const auto& b : base.checks) {
        if (b.name == c.name && b.status == "pass" && c.status != "pass") {
          p.verdict = "check regressed";
          p.detail = fmt::format("{} passed in the baseline, now {}", c.name, c.status);
        }
      }
    }
    if (p.baseline_samples_per_s > 0 && p.current_samples_per_s > 0) {
      p.delta = p.current_samples_per_s / p.baseline_samples_per_s - 1.0;
      const auto it = thresholds.point_max_slowdown.find(key);
      const double allowed =
          it != thresholds.point_max_slowdown.end() ? it->second : thresholds.max_slowdown;
      if (p.verdict == "ok" && p.delta < -allowed) {
        p.verdict = "slower";
        p.detail = fmt::format("{:.1f}% slower, {:.1f}% allowed", -100 * p.delta, 100 * allowed);
      }
    }
    g.passed = g.passed && p.verdict == "ok";
    g.points.push_back(p);
  }
  return g;
}

}  // namespace ddpbench::compare
