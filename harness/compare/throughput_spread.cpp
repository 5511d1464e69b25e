// throughput_spread.cpp — see throughput_spread.h.
#include "compare/throughput_spread.h"

#include <fmt/format.h>

#include <cmath>

#include "errors.h"
#include "stats/straggler.h"
#include "stats/timing_spread.h"

namespace ddpbench::compare {
namespace {

// Recomputation runs the same arithmetic on the same doubles (JSON keeps them exactly), so the
// figures agree to the last bit; the margin only forgives a printer that rounds the 17th digit.
bool same(double stored, double recomputed) {
  return std::fabs(stored - recomputed) <= 1e-12 * std::max(1.0, std::fabs(recomputed));
}

void require_same(const std::string& field, double stored, double recomputed) {
  if (same(stored, recomputed)) return;
  throw InputError(
      fmt::format("field {} is {} but the report's own step samples give {} (was the file edited?)",
                  field, stored, recomputed));
}

// The ranks' step counts, and the straggler they give (Note [Stragglers]): a verdict is never
// taken from the stored words.
void audit_straggler(const std::string& where, const reports::ThroughputRecord& t) {
  const size_t steps = t.repeats.empty() ? 0 : t.repeats.front().step_times_s.size();
  for (size_t i = 0; i < t.ranks.size(); ++i) {
    const reports::RankTimingRecord& r = t.ranks[i];
    if (r.rank != static_cast<int64_t>(i) || r.compute_s.size() != steps ||
        r.comm_wait_s.size() != steps) {
      throw InputError(fmt::format(
          "field {}.ranks[{}] is rank {} with {} compute and {} wait times, for {} timed steps in "
          "repeat 1 (was the file edited?)",
          where, i, r.rank, r.compute_s.size(), r.comm_wait_s.size(), steps));
    }
  }
  const reports::StragglerRecord s = straggler_record(t.ranks);
  const std::string at = where + ".straggler.";
  if (t.straggler.rank != s.rank || t.straggler.slowest_steps != s.slowest_steps ||
      t.straggler.summary != s.summary || t.straggler.vs_fastest.size() != s.vs_fastest.size() ||
      t.straggler.vs_own_best.size() != s.vs_own_best.size()) {
    throw InputError(fmt::format(
        "field {}rank/summary says \"{}\" but the report's own rank timings give \"{}\" (was "
        "the file edited?)",
        at, t.straggler.summary, s.summary));
  }
  require_same(at + "cost_s", t.straggler.cost_s, s.cost_s);
  for (size_t i = 0; i < s.vs_fastest.size(); ++i) {
    require_same(fmt::format("{}vs_fastest[{}]", at, i), t.straggler.vs_fastest[i],
                 s.vs_fastest[i]);
    require_same(fmt::format("{}vs_own_best[{}]", at, i), t.straggler.vs_own_best[i],
                 s.vs_own_best[i]);
  }
}

}  // namespace

reports::SpreadRecord spread_record(const std::vector<reports::RepeatRecord>& repeats) {
  std::vector<std::vector<double>> steps;
  for (const auto& r : repeats) steps.push_back(r.step_times_s);
  const stats::TimingSpread s = stats::timing_spread(steps);
  reports::SpreadRecord r;
  r.repeats = s.repeats;
  r.repeat_medians_s = s.repeat_medians;
  r.median_step_s = s.median;
  r.median_low_s = s.median_interval.lo;
  r.median_high_s = s.median_interval.hi;
  r.median_confidence = s.median_interval.confidence;
  r.cv = s.cv;
  r.repeat_spread = s.repeat_spread;
  return r;
}

reports::StragglerRecord straggler_record(const std::vector<reports::RankTimingRecord>& ranks) {
  std::vector<std::vector<double>> compute;
  for (const auto& r : ranks) compute.push_back(r.compute_s);
  const stats::StragglerScores s = stats::straggler_scores(compute);
  return {s.rank, s.cost_s, s.slowest_steps, s.vs_fastest, s.vs_own_best, s.summary};
}

double samples_per_s_of(const reports::ThroughputRecord& t) {
  return t.spread.median_step_s > 0 ? t.samples_per_step / t.spread.median_step_s : 0.0;
}

void audit_throughput(const std::string& where, const reports::ThroughputRecord& t,
                      int schema_version) {
  if (schema_version < 9) return;
  int64_t steps = 0;
  for (const auto& r : t.repeats) steps += static_cast<int64_t>(r.step_times_s.size());
  if (steps != t.timed_steps) {
    throw InputError(fmt::format(
        "field {}.timed_steps is {} but its repeats hold {} timed steps (was the file edited?)",
        where, t.timed_steps, steps));
  }
  const reports::SpreadRecord s = spread_record(t.repeats);
  const std::string at = where + ".spread.";
  if (t.spread.repeats != s.repeats) {
    throw InputError(fmt::format(
        "field {}repeats is {} but the report holds {} repeats with steps (was the file edited?)",
        at, t.spread.repeats, s.repeats));
  }
  if (t.spread.repeat_medians_s.size() != s.repeat_medians_s.size()) {
    throw InputError(
        fmt::format("field {}repeat_medians_s has {} values for {} repeats (was the file edited?)",
                    at, t.spread.repeat_medians_s.size(), s.repeat_medians_s.size()));
  }
  for (size_t i = 0; i < s.repeat_medians_s.size(); ++i) {
    require_same(fmt::format("{}repeat_medians_s[{}]", at, i), t.spread.repeat_medians_s[i],
                 s.repeat_medians_s[i]);
  }
  require_same(at + "median_step_s", t.spread.median_step_s, s.median_step_s);
  require_same(at + "median_low_s", t.spread.median_low_s, s.median_low_s);
  require_same(at + "median_high_s", t.spread.median_high_s, s.median_high_s);
  require_same(at + "median_confidence", t.spread.median_confidence, s.median_confidence);
  require_same(at + "cv", t.spread.cv, s.cv);
  require_same(at + "repeat_spread", t.spread.repeat_spread, s.repeat_spread);
  reports::ThroughputRecord recomputed = t;
  recomputed.spread = s;
  require_same(where + ".samples_per_s", t.samples_per_s, samples_per_s_of(recomputed));
  if (schema_version >= 10) audit_straggler(where, t);
}

}  // namespace ddpbench::compare
