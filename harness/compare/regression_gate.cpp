// regression_gate.cpp — see regression_gate.h.
#include "compare/regression_gate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "errors.h"
#include "quoted_input.h"

namespace ddpbench::compare {
namespace {

std::string key_of(const reports::RunConfig& c, const reports::ModeResult& r) {
  return fmt::format("{}/{}/{}", c.scenario, r.mode, r.world_size);
}

void require_same(const std::string& field, const std::string& base, const std::string& cur) {
  if (base != cur) {
    throw InputError(fmt::format(
        "gate: baseline and current runs differ in {} ({} vs {}): their numbers are not "
        "comparable; regenerate the baseline with the current configuration",
        field, quoted_input(base), quoted_input(cur)));
  }
}

std::string text(int64_t v) { return std::to_string(v); }
std::string text(bool v) { return v ? "true" : "false"; }
std::string text(const std::string& v) { return v; }
std::string text(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ",")); }

// Every recorded setting that changes what is computed or how fast: the gate compares like with
// like or refuses. (Software versions are left out on purpose: an upgrade is what a gate is
// often asked to judge.)
void require_same_configuration(const reports::RunReport& b, const reports::RunReport& c) {
  const reports::RunConfig& x = b.config;
  const reports::RunConfig& y = c.config;
  const auto same = [](const char* field, const auto& base, const auto& cur) {
    require_same(field, text(base), text(cur));
  };
  same("scenario", x.scenario, y.scenario);
  same("model", x.model, y.model);
  same("dataset", x.dataset, y.dataset);
  same("--data-dir", x.data_dir, y.data_dir);
  same("loss", x.loss, y.loss);
  same("optimizer", x.optimizer, y.optimizer);
  same("dtype", x.dtype, y.dtype);
  same("global batch", x.global_batch, y.global_batch);
  same("world size", x.world_size, y.world_size);
  same("modes", x.modes, y.modes);
  same("steps", x.steps, y.steps);
  same("warm-up steps", x.warmup_steps, y.warmup_steps);
  same("seed", x.seed, y.seed);
  same("threads per process", x.threads, y.threads);
  same("scaling (--strong)", x.scaling, y.scaling);
  same("device", b.context.device, c.context.device);
  same("GPUs", b.context.gpu_devices, c.context.gpu_devices);
  same("numerics (TF32, kernels)", b.context.numerics, c.context.numerics);
  same("--ddp-impl", x.ddp.impl, y.ddp.impl);
  same("--bucket-cap-mb (bytes)", x.ddp.bucket_cap_bytes, y.ddp.bucket_cap_bytes);
  same("--first-bucket-mb (bytes)", x.ddp.first_bucket_bytes, y.ddp.first_bucket_bytes);
  same("--comm-hook", x.ddp.comm_hook, y.ddp.comm_hook);
  same("buffer broadcast", x.ddp.broadcast_buffers, y.ddp.broadcast_buffers);
  same("--find-unused-parameters", x.ddp.find_unused_parameters, y.ddp.find_unused_parameters);
  same("SyncBN", x.ddp.sync_bn, y.ddp.sync_bn);
  same("--backend", x.ddp.backend, y.ddp.backend);
}

void require_fraction(const std::string& what, double v) {
  if (!std::isfinite(v) || v < 0 || v > 1) {
    throw InputError(fmt::format(
        "gate: {} is {}: give the allowed slowdown as a fraction from 0 to 1 (0.05 = 5%)", what,
        v));
  }
}

// Every threshold a fraction, and every per-point one naming a point of the baseline (a misspelt
// key would silently leave its point at the default).
void require_valid(const GateThresholds& t, const reports::RunReport& baseline) {
  require_fraction("--max-slowdown", t.max_slowdown);
  std::vector<std::string> points;
  for (const auto& m : baseline.results) points.push_back(key_of(baseline.config, m));
  for (const auto& [key, v] : t.point_max_slowdown) {
    require_fraction("point " + key, v);
    if (std::find(points.begin(), points.end(), key) == points.end()) {
      throw InputError(fmt::format(
          "--thresholds: point {} is not a point of the baseline, so its threshold would apply "
          "to nothing; the baseline's points are {}",
          quoted_input(key), fmt::join(points, ", ")));
    }
  }
}

// A point without a perf phase (--check-only) records 0 samples/s.
bool timed(const reports::ModeResult& m) { return m.throughput.samples_per_s > 0; }

// The checks of `base` that `cur` no longer has, by name.
std::vector<std::string> vanished_checks(const reports::ModeResult& base,
                                         const reports::ModeResult& cur) {
  std::vector<std::string> gone;
  for (const auto& b : base.checks) {
    bool present = false;
    for (const auto& c : cur.checks) present = present || c.name == b.name;
    if (!present) gone.push_back(b.name);
  }
  return gone;
}

// What the current point lacks that the baseline had, in words; empty when nothing vanished.
std::string vanished(const reports::ModeResult& base, const reports::ModeResult& cur) {
  std::vector<std::string> what;
  const std::vector<std::string> checks = vanished_checks(base, cur);
  if (!checks.empty()) {
    what.push_back(fmt::format("check{} {} ran in the baseline and not now",
                               checks.size() > 1 ? "s" : "", fmt::join(checks, ", ")));
  }
  if (timed(base) && !timed(cur)) what.push_back("the baseline was timed and this run was not");
  return fmt::format("{}", fmt::join(what, "; "));
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
  require_valid(thresholds, baseline);
  require_same_configuration(baseline, current);
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
    const std::string gone = vanished(base, *cur);
    if (!gone.empty() && p.verdict == "ok") {
      if (thresholds.allow_missing) {
        p.detail = gone + " (accepted: --allow-missing)";
      } else {
        p.verdict = "missing";
        p.detail = gone + ": nothing to compare (pass --allow-missing to accept)";
      }
    }
    if (timed(base) && timed(*cur)) {
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
