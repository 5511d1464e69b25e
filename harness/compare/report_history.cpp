// report_history.cpp — see report_history.h.
#include "compare/report_history.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/regression_gate.h"
#include "errors.h"
#include "quoted_input.h"
#include "stats/change_points.h"

namespace ddpbench::compare {
namespace {

// One point's series: per commit its result (null where that commit did not time the point).
struct Series {
  std::string key;
  std::vector<const reports::ModeResult*> results;
};

std::vector<Series> series_of(const std::vector<LabelledReport>& reports) {
  std::vector<Series> out;
  for (size_t c = 0; c < reports.size(); ++c) {
    const reports::RunReport& r = reports[c].report;
    for (const auto& m : r.results) {
      if (m.throughput.timed_steps == 0) continue;
      const std::string key = point_key(r.config, m);
      if (m.throughput.spread.repeats == 0) {
        throw InputError(fmt::format(
            "history: {} ({}) records no repeats (a report from before schema 9): re-run that "
            "commit with this ddpbench, ideally with --repeats 10",
            quoted_input(reports[c].label), key));
      }
      Series* s = nullptr;
      for (auto& existing : out) {
        if (existing.key == key) s = &existing;
      }
      if (s == nullptr) {
        s = &out.emplace_back();
        s->key = key;
        s->results.assign(reports.size(), nullptr);
      }
      s->results[c] = &m;
    }
  }
  return out;
}

// One run may be judged (insufficient data, Note [History status]); the same run twice may not:
// its repeats would be pooled twice, into its own lookback too.
void require_series(const std::vector<LabelledReport>& reports) {
  if (reports.empty()) {
    throw InputError(
        "history: give at least 1 run (run folders or report.json files of successive commits, "
        "oldest first)");
  }
  for (size_t c = 0; c < reports.size(); ++c) {
    for (size_t d = c + 1; d < reports.size(); ++d) {
      if (!same_run(reports[c].report, reports[d].report)) continue;
      throw InputError(fmt::format(
          "history: {} and {} are the same run (started {} on {}, the same timed steps), which "
          "would count twice: give each run once",
          quoted_input(reports[c].label), quoted_input(reports[d].label),
          reports[c].report.context.started_at, quoted_input(reports[c].report.context.host)));
    }
  }
  for (size_t c = 1; c < reports.size(); ++c) {
    require_same_configuration(
        reports[0].report, reports[c].report,
        fmt::format("history: runs {} and {}", quoted_input(reports[0].label),
                    quoted_input(reports[c].label)));
  }
}

// The commits of `s` that timed the point, their repeat medians and the load other processes
// put on each repeat (empty for a commit that did not measure it).
struct Timed {
  std::vector<size_t> commits;
  std::vector<std::vector<double>> medians;
  std::vector<std::vector<double>> others_shares;
};

Timed timed_of(const Series& s) {
  Timed t;
  for (size_t c = 0; c < s.results.size(); ++c) {
    if (s.results[c] == nullptr) continue;
    t.commits.push_back(c);
    t.medians.push_back(s.results[c]->throughput.spread.repeat_medians_s);
    t.others_shares.push_back(others_cpu_shares(s.results[c]->throughput));
  }
  return t;
}

stats::HistoryJudgement judge(const Timed& t, double max_slowdown, int64_t lookback) {
  return stats::judge_history(t.medians, max_slowdown, static_cast<size_t>(lookback),
                              &t.others_shares);
}

std::string status_detail(const stats::HistoryJudgement& h, const Timed& t,
                          const std::vector<LabelledReport>& reports) {
  switch (h.status) {
    case stats::HistoryStatus::kRegression: {
      size_t first = h.commits.size();
      while (first > 0 && h.commits[first - 1].slower) --first;
      return fmt::format("the last {} commits in a row are slower than their lookback, from {}",
                         h.commits.size() - first, quoted_input(reports[t.commits[first]].label));
    }
    case stats::HistoryStatus::kSuspicious: {
      std::vector<std::string> slower;
      for (size_t i = 0; i < h.commits.size(); ++i) {
        if (h.commits[i].slower) slower.push_back(quoted_input(reports[t.commits[i]].label));
      }
      return fmt::format(
          "slower than its lookback at {}, but not the last two commits in a row (an outlier, a "
          "run that recovered, or a newest commit a second must confirm)",
          fmt::join(slower, ", "));
    }
    case stats::HistoryStatus::kInsufficientData:
      return fmt::format(
          "{} commit{} and {} repeat medians in the newest commit's lookback: too few to judge it "
          "(at least 3 commits and {} repeat medians are needed)",
          h.commits.size(), h.commits.size() == 1 ? "" : "s",
          h.commits.empty() ? 0 : h.commits.back().lookback_repeats, stats::kMinGateRepeats);
    case stats::HistoryStatus::kOk:
      return "no commit slower than its lookback";
  }
  return "";
}

}  // namespace

bool same_run(const reports::RunReport& a, const reports::RunReport& b) {
  if (a.context.host != b.context.host || a.context.started_at != b.context.started_at ||
      a.results.size() != b.results.size()) {
    return false;
  }
  for (size_t i = 0; i < a.results.size(); ++i) {
    const auto& x = a.results[i].throughput.repeats;
    const auto& y = b.results[i].throughput.repeats;
    if (x.size() != y.size()) return false;
    for (size_t r = 0; r < x.size(); ++r) {
      if (x[r].step_times_s != y[r].step_times_s) return false;
    }
  }
  return true;
}

reports::HistoryReport judge_report_history(const std::vector<LabelledReport>& reports,
                                            double max_slowdown, int64_t lookback) {
  require_series(reports);
  reports::HistoryReport out;
  out.max_slowdown = max_slowdown;
  out.lookback = lookback;
  for (const auto& r : reports) out.labels.push_back(r.label);
  for (const Series& s : series_of(reports)) {
    const Timed t = timed_of(s);
    const stats::HistoryJudgement h = judge(t, max_slowdown, lookback);
    reports::HistoryPoint p;
    p.key = s.key;
    p.status = stats::status_name(h.status);
    p.detail = status_detail(h, t, reports);
    for (size_t i = 0; i < t.commits.size(); ++i) {
      const reports::ThroughputRecord& tp = s.results[t.commits[i]]->throughput;
      reports::HistoryCommit c;
      c.label = reports[t.commits[i]].label;
      c.repeats = tp.spread.repeats;
      c.samples_per_s = tp.samples_per_s;
      c.samples_per_s_low =
          tp.spread.median_high_s > 0 ? tp.samples_per_step / tp.spread.median_high_s : 0;
      c.samples_per_s_high =
          tp.spread.median_low_s > 0 ? tp.samples_per_step / tp.spread.median_low_s : 0;
      c.interval_confidence = tp.spread.median_confidence;
      c.slower = h.commits[i].slower;
      const stats::CommitJudgement& j = h.commits[i];
      c.against_lookback =
          j.lookback_commits == 0
              ? "no lookback (the first commit)"
              : fmt::format("{} against {} commit{}", stats::describe_change(j.against_lookback),
                            j.lookback_commits, j.lookback_commits == 1 ? "" : "s");
      if (j.load_explains) {
        c.against_lookback += fmt::format(
            "; not counted slower: other processes took {:.1f}% of the CPUs during its repeats "
            "and {:.1f}% during the lookback's (medians), and the load may explain it (Note [A "
            "slowdown the load explains])",
            100 * j.load, 100 * j.lookback_load);
      }
      p.commits.push_back(c);
    }
    for (const stats::ChangePoint& cp : h.change_points) {
      p.commits[cp.index].starts_level = true;
      p.commits[cp.index].level_change = cp.change;
    }
    out.regression = out.regression || h.status == stats::HistoryStatus::kRegression;
    out.points.push_back(std::move(p));
  }
  return out;
}

std::map<std::string, std::vector<double>> lookback_medians(
    const std::vector<LabelledReport>& reports, double max_slowdown, int64_t lookback) {
  std::map<std::string, std::vector<double>> out;
  require_series(reports);
  for (const Series& s : series_of(reports)) {
    const Timed t = timed_of(s);
    const stats::HistoryJudgement h = judge(t, max_slowdown, lookback);
    out[s.key] =
        stats::lookback_pool(t.medians, h.commits, t.commits.size(), static_cast<size_t>(lookback));
  }
  return out;
}

}  // namespace ddpbench::compare
