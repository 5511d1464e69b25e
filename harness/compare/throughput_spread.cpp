// throughput_spread.cpp — see throughput_spread.h.
#include "compare/throughput_spread.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "errors.h"
#include "stats/step_figures.h"
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

// The ranks in order, each with a compute and a wait time per timed step of repeat 1: what every
// figure computed from them indexes.
void require_rank_shapes(const std::string& where, const reports::ThroughputRecord& t) {
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
}

// The straggler the ranks' step times give (Note [Stragglers]): a verdict is never taken from the
// stored words.
void audit_straggler(const std::string& where, const reports::ThroughputRecord& t) {
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

// Repeat 1's steps as its ranks timed them: a step is its slowest rank's (the report keeps the
// longest total of any rank, and each rank's total as compute plus wait), so no rank's compute and
// wait exceed the step and one rank's make it up. Their sum rounds the total once: same() forgives.
void audit_rank_steps(const std::string& where, const reports::ThroughputRecord& t) {
  if (t.ranks.empty() || t.repeats.empty()) return;
  const std::vector<double>& steps = t.repeats.front().step_times_s;
  for (size_t i = 0; i < steps.size(); ++i) {
    double longest = 0;
    size_t at = 0;
    for (size_t r = 0; r < t.ranks.size(); ++r) {
      const double total = t.ranks[r].compute_s[i] + t.ranks[r].comm_wait_s[i];
      if (total > longest) {
        longest = total;
        at = r;
      }
    }
    if (!same(steps[i], longest)) {
      throw InputError(fmt::format(
          "field {}.ranks[{}] computed and waited {} s in timed step {} (compute_s + "
          "comm_wait_s), the longest of any rank, but repeat 1's step_times_s[{}] is {} s: a step "
          "takes as long as its slowest rank (was the file edited?)",
          where, at, longest, i, i, steps[i]));
    }
  }
}

// The mean over repeat 1's steps of the longest wait of any rank in each: the slowest rank's
// phases are a step's (modes/ranks' slowest_of), summed in order as metrics::summarize sums.
double longest_wait_mean(const std::vector<reports::RankTimingRecord>& ranks) {
  const size_t steps = ranks.front().comm_wait_s.size();
  if (steps == 0) return 0;
  double sum = 0;
  for (size_t i = 0; i < steps; ++i) {
    double longest = ranks.front().comm_wait_s[i];
    for (const reports::RankTimingRecord& r : ranks) longest = std::max(longest, r.comm_wait_s[i]);
    sum += longest;
  }
  return sum / static_cast<double>(steps);
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

void derive_figures(reports::ThroughputRecord& t, int64_t world_size, double scaling_efficiency) {
  std::vector<double> pooled;  // every repeat's steps, in order: what run's summary pools
  for (const auto& r : t.repeats) {
    pooled.insert(pooled.end(), r.step_times_s.begin(), r.step_times_s.end());
  }
  const stats::StepFigures f = stats::step_figures(pooled);
  t.timed_steps = f.steps;
  t.spread = spread_record(t.repeats);
  // The median step, not the mean: one slow step (a page fault, a preempted rank) moves the mean
  // of a short run by its whole excess, the median not at all (Note [Weak figures]); over
  // repeats, the median of their medians (Note [Repeats, not steps]).
  t.samples_per_s = samples_per_s_of(t);
  t.samples_per_s_per_device =
      t.samples_per_s / static_cast<double>(std::max<int64_t>(1, world_size));
  t.step_time_p50_s = f.p50;
  t.step_time_p90_s = f.p90;
  t.step_time_p99_s = f.p99;
  t.step_time_mean_s = f.mean;
  t.step_time_cv = f.cv;
  t.weak_reasons = stats::weak_reasons(f.steps, f.cv, scaling_efficiency);
  t.bus_bandwidth_gb_s = stats::allreduce_bus_bandwidth(t.bytes_allreduced_per_step, world_size,
                                                        t.spread.median_step_s) /
                         1e9;
  t.straggler = straggler_record(t.ranks);
  if (!t.ranks.empty()) t.phases.comm_wait = longest_wait_mean(t.ranks);
}

void audit_throughput(const std::string& where, const reports::ThroughputRecord& t,
                      int schema_version, int64_t world_size, double scaling_efficiency) {
  if (schema_version < 9) return;
  int64_t steps = 0;
  for (const auto& r : t.repeats) steps += static_cast<int64_t>(r.step_times_s.size());
  if (steps != t.timed_steps) {
    throw InputError(fmt::format(
        "field {}.timed_steps is {} but its repeats hold {} timed steps (was the file edited?)",
        where, t.timed_steps, steps));
  }
  require_rank_shapes(where, t);
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
  reports::ThroughputRecord d = t;
  derive_figures(d, world_size, scaling_efficiency);
  require_same(where + ".samples_per_s", t.samples_per_s, d.samples_per_s);
  require_same(where + ".samples_per_s_per_device", t.samples_per_s_per_device,
               d.samples_per_s_per_device);
  require_same(where + ".step_time_p50_s", t.step_time_p50_s, d.step_time_p50_s);
  require_same(where + ".step_time_p90_s", t.step_time_p90_s, d.step_time_p90_s);
  require_same(where + ".step_time_p99_s", t.step_time_p99_s, d.step_time_p99_s);
  require_same(where + ".step_time_mean_s", t.step_time_mean_s, d.step_time_mean_s);
  require_same(where + ".step_time_cv", t.step_time_cv, d.step_time_cv);
  require_same(where + ".bus_bandwidth_gb_s", t.bus_bandwidth_gb_s, d.bus_bandwidth_gb_s);
  if (t.weak_reasons != d.weak_reasons) {
    throw InputError(fmt::format(
        "field {}.weak_reasons holds {} reason(s) but the report's own step samples give {}{} "
        "(Note [Weak figures]; was the file edited?)",
        where, t.weak_reasons.size(), d.weak_reasons.size(),
        d.weak_reasons.empty() ? "" : ": " + d.weak_reasons.front()));
  }
  if (schema_version < 10) return;
  audit_rank_steps(where, t);
  if (!t.ranks.empty() && !same(t.phases.comm_wait, d.phases.comm_wait)) {
    throw InputError(fmt::format(
        "field {}.phases.comm_wait_s is {} but its ranks' waits give {} (a step's wait is its "
        "slowest rank's, averaged over repeat 1's steps; was the file edited?)",
        where, t.phases.comm_wait, d.phases.comm_wait));
  }
  audit_straggler(where, t);
}

}  // namespace ddpbench::compare
