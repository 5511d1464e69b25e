// gate_throughput.cpp — see gate_throughput.h.
#include "compare/gate_throughput.h"

#include <fmt/format.h>

#include <cmath>

#include "stats/load_rule.h"
#include "stats/rank_statistics.h"
#include "stats/speed_change.h"

namespace ddpbench::compare {
namespace {

// Adds `more` to the point's detail.
void add_detail(GatePoint& p, const std::string& more) {
  p.detail = p.detail.empty() ? more : p.detail + "; " + more;
}

// A decided SpeedChange into the point: its figures always, its verdict and detail when the
// checks left the point ok. `over` says what it was measured over ("over 10 and 10 repeats"),
// `what` the statistic, `unit` and `flag` what the undecided advice counts and sets.
void apply_speed_change(const stats::SpeedChange& c, double allowed, const std::string& over,
                        const std::string& what, const std::string& unit, const std::string& flag,
                        GatePoint& p) {
  p.shift = c.change;
  p.shift_low = c.low;
  p.shift_high = c.high;
  p.p_value = c.p_value;
  if (p.verdict != "ok") return;
  const bool has_interval = c.confidence > 0;
  // Too few repeats for any interval at the gate's confidence is not noise: say which it is.
  const std::string interval =
      has_interval ? fmt::format("{} ({:.0f}% interval {})", stats::describe_change(c),
                                 100 * stats::kGateConfidence, over)
                   : fmt::format("{:+.1f}% (no {:.0f}% interval exists {})", 100 * c.change,
                                 100 * stats::kGateConfidence, over);
  const std::string measured = fmt::format("{} {}, p = {:.2g}", what, interval, c.p_value);
  switch (c.verdict) {
    case stats::SpeedVerdict::kSlower:
      p.verdict = "slower";
      p.detail = fmt::format("{}: significantly slower, {:.1f}% allowed", measured, 100 * allowed);
      break;
    case stats::SpeedVerdict::kOk:
      add_detail(p, measured);
      break;
    case stats::SpeedVerdict::kUndecided:
      p.verdict = "undecided";
      p.repeats_needed = c.repeats_needed;
      p.detail = fmt::format(
          "{}: too {} to tell against {:.1f}% allowed; {}", measured,
          has_interval ? "noisy" : "few " + unit.substr(0, unit.find(' ')), 100 * allowed,
          c.repeats_needed < 0 ? "the change sits at the threshold, so no number of repeats "
                                 "decides it: raise or lower the allowance"
          : c.repeats_needed > stats::kMaxRepeatsAdvice
              ? fmt::format("more than {} {} would be needed: quiet the machine",
                            stats::kMaxRepeatsAdvice, unit)
              : fmt::format("about {} {} would decide ({} {})", c.repeats_needed, unit, flag,
                            c.repeats_needed));
      break;
  }
}

// Note [A slowdown the load explains] over two jobs: says when the two runs met different loads,
// and turns a `slower` that the current run's heavier load may explain into `undecided`.
void apply_load_rule(const reports::ThroughputRecord& base, const reports::ThroughputRecord& cur,
                     GatePoint& p) {
  const std::vector<double> b = others_cpu_shares(base);
  const std::vector<double> c = others_cpu_shares(cur);
  if (b.empty() || c.empty()) return;
  const stats::LoadComparison load = stats::compare_unpaired_load(b, c);
  const bool differ =
      load.p_value < stats::kLoadSignificance && std::abs(load.centre) > stats::kLoadMargin;
  if (!differ) return;
  const std::string loads = fmt::format(
      "other processes took {:.1f}% of the CPUs during the baseline's repeats and {:.1f}% during "
      "the current's (medians; shift {:+.1f}%, p = {:.2g})",
      100 * load.baseline_median, 100 * load.current_median, 100 * load.centre, load.p_value);
  if (!load.current_busier) {
    add_detail(p, loads + ": the baseline ran under more load, which can hide a slowdown");
  } else if (p.verdict == "slower" && stats::load_explains(load, -p.shift_high)) {
    p.verdict = "undecided";
    p.detail += "; but " + loads +
                ": the load may explain it, not the build (Note [A slowdown the load explains]); "
                "rerun both on a quieter runner, or in one job with `ddpbench ab`";
  } else if (p.verdict == "slower") {
    add_detail(p, fmt::format("{}: more load, but too little to explain a slowdown of at least "
                              "{:.1f}% (at most {:.0f}x the extra share)",
                              loads, -100 * p.shift_high, stats::kLoadAmplification));
  } else {
    add_detail(p, loads + ": the current ran under more load");
  }
}

}  // namespace

void judge_throughput(const reports::ThroughputRecord& base, const reports::ThroughputRecord& cur,
                      double allowed, const std::vector<double>* lookback, GatePoint& p) {
  if (lookback != nullptr) {
    // gate --history: the baseline is the lookback distribution, its repeats pooled, and its
    // samples/s the one at their median.
    reports::ThroughputRecord pooled = base;
    pooled.spread.repeat_medians_s = *lookback;
    pooled.spread.repeats = static_cast<int64_t>(lookback->size());
    pooled.repeats.clear();  // their loads are the newest report's only: no load rule here
    const double median_s = stats::median(*lookback);
    p.baseline_samples_per_s = median_s > 0 ? base.samples_per_step / median_s : 0;
    return judge_throughput(pooled, cur, allowed, nullptr, p);
  }
  p.baseline_repeats = base.spread.repeats;
  p.current_repeats = cur.spread.repeats;
  p.delta =
      p.baseline_samples_per_s > 0 ? p.current_samples_per_s / p.baseline_samples_per_s - 1.0 : 0.0;
  const bool judged = p.verdict == "ok";
  if (base.spread.repeats < 2 || cur.spread.repeats < 2) {
    p.timing_rule = "single sample";
    if (!judged) return;
    const std::string why = base.spread.repeats == 0 || cur.spread.repeats == 0
                                ? "a report from before repeats (schema 8)"
                                : "one repeat";
    if (p.delta < -allowed) {
      p.verdict = "slower";
      p.detail = fmt::format("{:.1f}% slower, {:.1f}% allowed", -100 * p.delta, 100 * allowed);
    }
    add_detail(p, fmt::format("single sample a side ({}): the ratio, not a statistical verdict; "
                              "run both with --repeats 10",
                              why));
    return;
  }
  const stats::SpeedChange c =
      stats::judge_speed(base.spread.repeat_medians_s, cur.spread.repeat_medians_s, allowed);
  p.timing_rule = "repeats";
  apply_speed_change(c, allowed,
                     fmt::format("over {} and {} repeats", base.spread.repeats, cur.spread.repeats),
                     "shift of the repeat medians", "repeats a side", "--repeats", p);
  apply_load_rule(base, cur, p);
}

void judge_paired(const reports::ThroughputRecord& base, const reports::ThroughputRecord& cur,
                  double allowed, const GateThresholds::PairedRounds& rounds, GatePoint& p) {
  const auto at_median = [](const reports::ThroughputRecord& t, const std::vector<double>& s) {
    const double median_s = stats::median(s);
    return median_s > 0 ? t.samples_per_step / median_s : 0.0;
  };
  p.baseline_samples_per_s = at_median(base, rounds.baseline_s);
  p.current_samples_per_s = at_median(cur, rounds.current_s);
  p.baseline_repeats = static_cast<int64_t>(rounds.baseline_s.size());
  p.current_repeats = static_cast<int64_t>(rounds.current_s.size());
  p.delta =
      p.baseline_samples_per_s > 0 ? p.current_samples_per_s / p.baseline_samples_per_s - 1.0 : 0.0;
  p.timing_rule = "paired rounds";
  const stats::SpeedChange c =
      stats::judge_paired_speed(rounds.baseline_s, rounds.current_s, allowed);
  apply_speed_change(c, allowed, fmt::format("over {} paired rounds", rounds.baseline_s.size()),
                     "paired shift of the rounds", "rounds", "--rounds", p);
}

}  // namespace ddpbench::compare
