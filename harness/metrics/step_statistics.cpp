// step_statistics.cpp — see step_statistics.h.
#include "metrics/step_statistics.h"

#include <algorithm>

namespace ddpbench::metrics {

PhaseTimes max_of(const PhaseTimes& a, const PhaseTimes& b) {
  return {std::max(a.data, b.data),           std::max(a.forward, b.forward),
          std::max(a.backward, b.backward),   std::max(a.comm_wait, b.comm_wait),
          std::max(a.optimizer, b.optimizer), std::max(a.total, b.total)};
}

StepSummary summarize(const std::vector<PhaseTimes>& steps) {
  StepSummary s;
  s.steps = static_cast<int64_t>(steps.size());
  if (steps.empty()) return s;
  std::vector<double> totals;
  for (const auto& t : steps) {
    totals.push_back(t.total);
    s.phase_means.data += t.data;
    s.phase_means.forward += t.forward;
    s.phase_means.backward += t.backward;
    s.phase_means.comm_wait += t.comm_wait;
    s.phase_means.optimizer += t.optimizer;
  }
  const double n = static_cast<double>(steps.size());
  for (double* p : {&s.phase_means.data, &s.phase_means.forward, &s.phase_means.backward,
                    &s.phase_means.comm_wait, &s.phase_means.optimizer}) {
    *p /= n;
  }
  // The step time's figures are the ones `report` and `gate` recompute from the stored samples.
  const stats::StepFigures f = stats::step_figures(totals);
  s.p50 = f.p50;
  s.p90 = f.p90;
  s.p99 = f.p99;
  s.mean = f.mean;
  s.stddev = f.stddev;
  s.cv = f.cv;
  s.phase_means.total = f.mean;
  return s;
}

}  // namespace ddpbench::metrics
