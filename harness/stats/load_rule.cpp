// load_rule.cpp — see load_rule.h.
#include "stats/load_rule.h"

#include "stats/rank_statistics.h"
#include "stats/signed_rank.h"

namespace ddpbench::stats {

LoadComparison compare_load(const std::vector<double>& baseline,
                            const std::vector<double>& current) {
  LoadComparison c;
  std::vector<double> d;
  for (size_t i = 0; i < baseline.size() && i < current.size(); ++i) {
    d.push_back(current[i] - baseline[i]);
  }
  c.baseline_median = median(baseline);
  c.current_median = median(current);
  if (d.empty()) return c;
  c.centre = paired_hodges_lehmann(d, 0.95).estimate;
  c.p_value = wilcoxon_signed_rank(d).p_value;
  c.current_busier = c.p_value < kLoadSignificance && c.centre > kLoadMargin;
  return c;
}

bool load_explains(const LoadComparison& load, double least_slowdown) {
  return load.current_busier && least_slowdown <= kLoadAmplification * load.centre;
}

LoadComparison compare_unpaired_load(const std::vector<double>& baseline,
                                     const std::vector<double>& current) {
  LoadComparison c;
  c.baseline_median = median(baseline);
  c.current_median = median(current);
  if (baseline.empty() || current.empty()) return c;
  c.centre = hodges_lehmann(baseline, current, 0.95).estimate;
  c.p_value = mann_whitney(current, baseline).p_value;
  c.current_busier = c.p_value < kLoadSignificance && c.centre > kLoadMargin;
  return c;
}

}  // namespace ddpbench::stats
