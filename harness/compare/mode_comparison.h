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

// One tensor of a mode's state after a lockstep step against the reference's after the same step
// from the same state (the optimizer update, and the buffers the forward updated).
struct StateDiff {
  int64_t step = 0;
  std::string tensor;
  bool buffer = false;
  double max_abs = 0.0;
  double max_rel = 0.0;
  int64_t violations = 0;  // elements outside the state tolerance
};

// What a mode computed. Gradients: per step, one record per parameter (param_names order).
struct ModeTrace {
  std::vector<double> losses;
  std::vector<std::vector<at::Tensor>> gradients;
  std::vector<std::string> param_names;
  std::vector<std::pair<std::string, at::Tensor>> final_state;  // parameters, then buffers
  // "free-running": trained on its own from the common start; "lockstep": every step started
  // from the reference's state.
  std::string comparison = "free-running";
  // Lockstep only: every parameter and buffer after every step, against the reference's.
  std::vector<StateDiff> state_diffs;
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
