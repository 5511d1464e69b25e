// regression_gate.cpp — see regression_gate.h.
#include "compare/regression_gate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <regex>

#include "compare/gate_throughput.h"
#include "errors.h"
#include "quoted_input.h"
#include "reports/run/record_fields.h"
#include "reports/run/verdict.h"

namespace ddpbench::compare {
namespace {

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {
  using Element = T;
};

template <typename T>
constexpr bool records_vector() {
  if constexpr (IsVector<T>::value) return reports::kIsRecord<typename IsVector<T>::Element>;
  return false;
}

// A field's value as text, for comparing and for the refusal message.
template <typename T>
std::string text_of(const T& v) {
  if constexpr (std::is_enum_v<T>) {
    return std::string(reports::name_of(v));
  } else if constexpr (std::is_same_v<T, std::string>) {
    return quoted_input(v);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (IsVector<T>::value) {
    std::vector<std::string> parts;
    for (const auto& e : v) parts.push_back(text_of(static_cast<typename T::value_type>(e)));
    return fmt::format("[{}]", fmt::join(parts, ","));
  } else {
    return fmt::format("{}", v);
  }
}

// The scenario as YAML without the paths of its files (MODEL.FILE, DATA.FILE, the two `FILE:`
// keys): their contents are compared by hash (config.model, config.dataset), and the same bytes
// reached through another path (a symlink, another checkout) compute the same thing.
std::string without_file_paths(const std::string& yaml) {
  static const std::regex file_key(R"(\n(\s+)FILE: [^\n]*)");
  return std::regex_replace(yaml, file_key, "\n$1FILE: (compared by content)");
}

// Every field of a record that changes the numbers (reports/run/record_fields.h), as path and value,
// in the lists' order: the gate compares two such lists, so a field added to a list later is
// compared without an edit here.
struct NumbersFields {
  std::string prefix;
  bool with_timings;  // kTimings fields too: both runs timed
  std::vector<std::pair<std::string, std::string>>& out;

  template <typename T>
  void operator()(const char* key, const T& field, const reports::FieldSpec& spec) {
    const std::string path = prefix + key;
    if constexpr (reports::kIsRecord<T>) {
      NumbersFields sub{path + ".", with_timings, out};
      reports::fields(sub, field);
    } else if constexpr (!records_vector<T>()) {  // a check list is compared check by check
      if (spec.affects == reports::Affects::kNumbers ||
          (with_timings && spec.affects == reports::Affects::kTimings)) {
        if constexpr (std::is_same_v<T, std::string>) {
          if (path == "config.scenario_yaml") {
            out.emplace_back(path, text_of(without_file_paths(field)));
            return;
          }
        }
        out.emplace_back(path, text_of(field));
      }
    }
  }
};

template <typename Record>
std::vector<std::pair<std::string, std::string>> numbers_fields(const std::string& prefix,
                                                                const Record& r,
                                                                bool with_timings) {
  std::vector<std::pair<std::string, std::string>> out;
  NumbersFields v{prefix, with_timings, out};
  reports::fields(v, r);
  return out;
}

// Refuses, naming the first field in which the two records differ.
template <typename Record>
void require_same_numbers(const std::string& prefix, const Record& base, const Record& cur,
                          bool with_timings = true,
                          const std::string& who = "gate: baseline and current runs") {
  const auto b = numbers_fields(prefix, base, with_timings);
  const auto c = numbers_fields(prefix, cur, with_timings);
  for (size_t i = 0; i < b.size() && i < c.size(); ++i) {
    if (b[i].second == c[i].second) continue;
    throw InputError(fmt::format(
        "{} differ in {} ({} vs {}): their numbers are not comparable; regenerate the baseline "
        "with the current configuration",
        who, b[i].first, b[i].second.substr(0, 200), c[i].second.substr(0, 200)));
  }
}

// A point without a perf phase (--check-only) records 0 samples/s.
bool timed(const reports::ModeResult& m) { return m.throughput.samples_per_s > 0; }

bool any_timed(const reports::RunReport& r) {
  return std::any_of(r.results.begin(), r.results.end(), timed);
}

bool any_checked(const reports::RunReport& r) {
  return std::any_of(r.results.begin(), r.results.end(),
                     [](const reports::ModeResult& m) { return !m.checks.empty(); });
}

// -0 is refused too: it printed "-0.0% allowed" (std::signbit, as the CLI's check refuses it).
void require_fraction(const std::string& what, double v) {
  if (!std::isfinite(v) || std::signbit(v) || v > 1) {
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
  for (const auto& m : baseline.results) points.push_back(point_key(baseline.config, m));
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

// The checks of `base` that `cur` no longer has, by name.
std::vector<std::string> vanished_checks(const reports::ModeResult& base,
                                         const reports::ModeResult& cur) {
  std::vector<std::string> gone;
  for (const auto& b : base.checks) {
    bool present = false;
    for (const auto& c : cur.checks) present = present || c.name == b.name;
    if (!present) gone.push_back(reports::name_str(b.name));
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
    if (point_key(r.config, m) == key) return &m;
  }
  return nullptr;
}

// The point itself (its backend) and the rule of every check both ran: a check judged by a
// widened tolerance is another check. Throws InputError.
void require_same_point(const std::string& key, const reports::ModeResult& base,
                        const reports::ModeResult& cur) {
  require_same_numbers(fmt::format("results[{}].", key), base, cur);
  for (const auto& b : base.checks) {
    for (const auto& c : cur.checks) {
      if (b.name != c.name) continue;
      require_same_numbers(fmt::format("results[{}].checks[{}].", key, reports::name_of(b.name)), b,
                           c);
    }
  }
}

// The point's verdict from its checks: "check failed" at the first failing one, "check
// regressed" where a check that passed in the baseline does not now, else "ok".
void judge_checks(const reports::ModeResult& base, const reports::ModeResult& cur, GatePoint& p) {
  p.verdict = "ok";
  for (const auto& c : cur.checks) {
    if (c.status == reports::CheckStatus::kFail) {
      p.verdict = "check failed";
      p.detail = fmt::format("{}: {}", reports::name_of(c.name), reports::describe_counts(c));
      return;
    }
    for (const auto& b : base.checks) {
      if (b.name == c.name && b.status == reports::CheckStatus::kPass &&
          c.status != reports::CheckStatus::kPass) {
        p.verdict = "check regressed";
        p.detail = fmt::format("{} passed in the baseline, now {}", reports::name_of(c.name),
                               reports::name_of(c.status));
      }
    }
  }
}

}  // namespace

std::vector<double> others_cpu_shares(const reports::ThroughputRecord& t) {
  std::vector<double> shares;
  for (const reports::RepeatRecord& r : t.repeats) {
    if (r.runner_load.wall_s <= 0) return {};
    shares.push_back(r.runner_load.others_cpu_share);
  }
  return shares;
}

std::string point_key(const reports::RunConfig& c, const reports::ModeResult& r) {
  return fmt::format("{}/{}/{}", c.scenario, reports::name_of(r.mode), r.world_size);
}

// Every recorded setting that changes what is computed or how fast: the gate compares like with
// like or refuses. (Software versions are left out on purpose: an upgrade is what a gate is
// often asked to judge.) The timed phase's settings count only where both runs have one.
void require_same_configuration(const reports::RunReport& b, const reports::RunReport& c,
                                const std::string& who) {
  const bool with_timings = any_timed(b) && any_timed(c);
  require_same_numbers("context.", b.context, c.context, with_timings, who);
  require_same_numbers("config.", b.config, c.config, with_timings, who);
}

GateResult run_gate(const reports::RunReport& baseline, const reports::RunReport& current,
                    const GateThresholds& thresholds) {
  // Both verdicts as their numbers give them (reports/run/verdict.h), whoever built the records.
  reports::require_recomputed(baseline);
  reports::require_recomputed(current);
  require_valid(thresholds, baseline);
  require_same_configuration(baseline, current, "gate: baseline and current runs");
  GateResult g;
  if (!thresholds.lookback_medians.empty()) g.baseline_column = "lookback";
  for (const auto& base : baseline.results) {
    const std::string key = point_key(baseline.config, base);
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
    require_same_point(key, base, *cur);
    p.current_samples_per_s = cur->throughput.samples_per_s;
    judge_checks(base, *cur, p);
    // A point that neither checked nor timed anything compared nothing of its own. In a
    // check-only run that is the reference (single): the other points' checks judge against
    // it, so it passes with them; in a run that checked and timed nothing, never ok.
    if (p.verdict == "ok" && cur->checks.empty() && !timed(*cur)) {
      if (any_checked(current)) {
        p.detail = "the reference of this run's checks: nothing of its own to compare";
      } else {
        p.verdict = "nothing compared";
        p.detail = "the current run neither checked nor timed this point";
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
      const auto it = thresholds.point_max_slowdown.find(key);
      const double allowed =
          it != thresholds.point_max_slowdown.end() ? it->second : thresholds.max_slowdown;
      const auto pool = thresholds.lookback_medians.find(key);
      const auto rounds = thresholds.paired_rounds.find(key);
      if (rounds != thresholds.paired_rounds.end()) {
        judge_paired(base.throughput, cur->throughput, allowed, rounds->second, p);
      } else {
        judge_throughput(base.throughput, cur->throughput, allowed,
                         pool == thresholds.lookback_medians.end() ? nullptr : &pool->second, p);
      }
    }
    const bool accepted = p.verdict == "undecided" && thresholds.allow_undecided;
    if (accepted) p.detail += " (accepted: --allow-undecided)";
    g.passed = g.passed && (p.verdict == "ok" || accepted);
    g.points.push_back(p);
  }
  return g;
}

}  // namespace ddpbench::compare
