// mode_comparison.h — judges one mode's training against single-device training: the global loss
// every step, every parameter's gradient every step, and every parameter and buffer at the end.
// Each check reports the worst difference and is `pass`, `fail`, or `expected_divergence` when
// only tensors the scenario declared divergent for this mode (with a reason) differ.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "compare/tensor_diff.h"
#include "reports/run_record.h"

namespace ddpbench::compare {

// What a mode computed. Gradients: per step, one record per parameter (param_names order).
struct ModeTrace {
  std::vector<double> losses;
  std::vector<std::vector<at::Tensor>> gradients;
  std::vector<std::string> param_names;
  std::vector<std::pair<std::string, at::Tensor>> final_state;  // parameters, then buffers
};

struct DivergenceRule {
  std::string pattern;  // ECMAScript regex matched against "loss" and tensor names
  std::string reason;
};

struct ComparisonPolicy {
  Tolerance state;                  // parameters, buffers and losses
  double gradient_tolerance = 0.0;  // on normalized_gradient_error
  bool gradient_fingerprints = false;
  std::vector<DivergenceRule> divergences;  // for the mode being judged
};

std::vector<reports::CheckRecord> compare_modes(const ModeTrace& reference,
                                                const ModeTrace& candidate,
                                                const ComparisonPolicy& policy);

// The DDP ranks-agree-bitwise check; step < 0 means they always agreed.
reports::CheckRecord rank_agreement_check(int64_t step, int64_t rank, const std::string& tensor);

}  // namespace ddpbench::compare
