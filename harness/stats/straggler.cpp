// straggler.cpp — see straggler.h.
#include "stats/straggler.h"

#include <fmt/format.h>

#include <algorithm>

#include "stats/rank_statistics.h"

namespace ddpbench::stats {

StragglerScores straggler_scores(const std::vector<std::vector<double>>& compute_s) {
  StragglerScores s;
  const size_t ranks = compute_s.size();
  if (ranks < 2) return s;
  const size_t steps = compute_s.front().size();
  std::vector<double> medians;
  for (const auto& c : compute_s) medians.push_back(median(c));
  const double fastest = *std::min_element(medians.begin(), medians.end());
  for (size_t r = 0; r < ranks; ++r) {
    const double best =
        compute_s[r].empty() ? 0 : *std::min_element(compute_s[r].begin(), compute_s[r].end());
    s.vs_fastest.push_back(fastest > 0 ? medians[r] / fastest : 1.0);
    s.vs_own_best.push_back(best > 0 ? medians[r] / best : 1.0);
  }
  const size_t slowest =
      static_cast<size_t>(std::max_element(medians.begin(), medians.end()) - medians.begin());
  // The steps it computed longest in, and by how much longer than the next slowest rank.
  int64_t longest = 0;
  std::vector<double> excess;
  for (size_t t = 0; t < steps; ++t) {
    double others = 0;
    for (size_t r = 0; r < ranks; ++r) {
      if (r != slowest) others = std::max(others, compute_s[r][t]);
    }
    if (compute_s[slowest][t] >= others) ++longest;
    excess.push_back(std::max(0.0, compute_s[slowest][t] - others));
  }
  const double cost = median(excess);
  double next = 0;
  for (size_t r = 0; r < ranks; ++r) {
    if (r != slowest) next = std::max(next, medians[r]);
  }
  const bool enough = static_cast<int64_t>(steps) >= kMinSteps;
  const bool consistent =
      static_cast<double>(longest) >= kSlowestShare * static_cast<double>(steps);
  const bool slower = medians[slowest] >= (1 + kMargin) * next;
  const bool costly = cost >= kMinCostShare * medians[slowest];
  if (enough && consistent && slower && costly) {
    s.rank = static_cast<int64_t>(slowest);
    s.cost_s = cost;
    s.slowest_steps = longest;
    s.summary = fmt::format(
        "rank {} is the straggler: it computed longest in {} of {} timed steps, its median compute "
        "{:.2f} ms is {:.2f}x the fastest rank's, and the others waited {:.2f} ms per step for it "
        "(median)",
        slowest, longest, steps, 1e3 * medians[slowest], s.vs_fastest[slowest], 1e3 * cost);
  } else {
    s.summary = fmt::format(
        "no straggler: the slowest rank ({}, {:.2f}x the fastest rank's median compute) computed "
        "longest in {} of {} timed steps{}",
        slowest, s.vs_fastest[slowest], longest, steps,
        !enough       ? fmt::format(", fewer than the {} a verdict needs", kMinSteps)
        : !consistent ? ""
        : !slower
            ? fmt::format(", and within {:.0f}% of the next slowest rank", 1e2 * kMargin)
            : fmt::format(", and cost the step under {:.0f}% of its compute", 1e2 * kMinCostShare));
  }
  return s;
}

}  // namespace ddpbench::stats
