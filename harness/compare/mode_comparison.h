// mode_comparison.h — judges one mode's training against its reference (single-device training or
// the exact reference): the global loss and every parameter's gradient every step, and the
// parameters and buffers (at the end, or after every step in lockstep). Each check reports the
// worst difference and is `pass`, `fail`, or `expected_divergence` when only tensors the scenario
// declared divergent for this mode (with a reason) differ; a failing comparison also names the
// first divergence (earliest step, stage and tensor).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "compare/rounding_floor.h"
#include "compare/tensor_diff.h"
#include "reports/run/run_record.h"

namespace ddpbench::compare {

// One tensor of a mode after a lockstep step, against the reference's after the same step from
// the same state. `family` is the check that judges it, as its row says (Note [One row per check],
// reports/run/record_enums.h): kUpdates (the optimizer update, parameter after minus parameter before;
// `error` is its normalized_gradient_error against the reference's update), kBuffers (updated by
// the forward; elementwise, `error` is max |diff|, `violations` counts elements outside the state
// tolerance, `ratio` is max |diff| / (atol + rtol * |ref|)), kOptimizerState (an entry of the
// optimizer's state after the step, `tensor` "<parameter>[<entry>] (rank R)" naming the rank
// whose copy differed most; judged like an update).
struct StateDiff {
  int64_t step = 0;
  std::string tensor;
  reports::Stage family = reports::Stage::kUpdates;
  double error = 0.0;
  double max_rel = 0.0;
  int64_t violations = 0;
  double ratio = 0.0;
  double ref_max_abs = 0.0;
};

// What a mode computed. Gradients: per step, one record per parameter (param_names order).
struct ModeTrace {
  std::vector<double> losses;
  std::vector<std::vector<at::Tensor>> gradients;
  // --amp fp16, per step: the GradScaler's scale and whether the step was skipped (empty without
  // a scaler). A skipped step's gradients are recorded as absent: they held an inf or NaN.
  std::vector<double> loss_scales;
  std::vector<bool> skipped;
  // The run-global step of losses[0] and gradients[0]: a --resume run starts at its checkpoint's.
  int64_t first_step = 0;
  std::vector<std::string> param_names;
  std::vector<std::pair<std::string, at::Tensor>> final_state;  // parameters, then buffers
  // Free-running references: per parameter, elementwise max(|initial value|, sum over the steps of
  // |update|): the size of what made the final parameter, which its rounding scales with
  // (Note [Parameters judged by what moved them]). Empty where not measured.
  std::vector<at::Tensor> parameter_travel;
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

struct ModeComparison {
  std::vector<reports::CheckRecord> checks;
  reports::DivergenceRecord first_divergence;  // empty stage when every check passed
};

// Lockstep traces are judged on the loss, gradients, updates and buffers of every step (and the
// optimizer state after it, where the driver recorded it: zero);
// free-running ones on the loss and gradients of every step and the final parameters and buffers.
// With `floors`, an item beyond its fixed limit is held to its measured floor's limit instead
// (Note [Rounding floor measured on the model]); the optimizer state has no floor.
//
// Note [Parameters judged by what moved them]: a final parameter of a free-running comparison is
// within atol + rtol x max(|ref|, travel) elementwise, where travel is the reference's
// parameter_travel. Its rounding accumulates from every p + update the trajectory took, so it
// scales with what was added, not with where the parameter happened to end: a BatchNorm weight
// that went from 1 to 25.8 and back to 1.7 in two steps carries rounding of 25.8's size, which
// rtol x 1.7 cannot hold (scripted shufflenet_v2_x0_5, float64, world 3: 2.7e-10 apart against
// 1.7e-10). A fault still moves the final parameter by its own size, which the travel does not
// hide beyond what the steps themselves moved.
ModeComparison compare_modes(const ModeTrace& reference, const ModeTrace& candidate,
                             const ComparisonPolicy& policy,
                             const MeasuredFloors* floors = nullptr);

// The DDP ranks-agree-bitwise check over `steps` checked steps; step < 0 means they always agreed.
reports::CheckRecord rank_agreement_check(int64_t steps, int64_t step, int64_t rank,
                                          const std::string& tensor);
// With broadcast_buffers: every rank's forward started from rank 0's buffers; step < 0 means
// they always did.
reports::CheckRecord buffer_agreement_check(int64_t steps, int64_t step, int64_t rank,
                                            const std::string& tensor);

// --amp fp16: every step used the reference's GradScaler scale and was skipped exactly when the
// reference's was (a step skipped in one and not the other changes the trajectory in a way no
// tolerance should absorb).
reports::CheckRecord loss_scale_check(const ModeTrace& reference, const ModeTrace& candidate);
// --amp fp16 under DDP: every rank held rank 0's scale after every step (pytorch/pytorch#90057);
// step < 0 means they always did.
reports::CheckRecord scale_agreement_check(int64_t steps, int64_t step, int64_t rank, double scale,
                                           double rank0_scale);

// A failing ranks_* check becomes the first divergence when it comes before the one against the
// reference (or there is none): ranks parting from rank 0 is where a mode parts too.
void offer_ranks_check(const reports::CheckRecord& check, reports::DivergenceRecord& first);

}  // namespace ddpbench::compare
