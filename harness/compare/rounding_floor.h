// rounding_floor.h — the rounding floor measured on the run's own model: how far the reference's
// own arithmetic lies from the same training in another precision, per step and tensor, and the
// limit an item beyond its check's fixed limit is held to instead (Note [Rounding floor measured
// on the model]). Measured by training/rounding_floor.h; applied by the comparisons
// (mode_comparison.h, ddp_agreement.h) through CheckBuilder, which counts and names the items it
// let through.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "compare/tensor_diff.h"
#include "reports/run/record_enums.h"
#include "reports/run/verdict.h"

namespace ddpbench::compare {

// Note [Rounding floor measured on the model]: the fixed limits of Note [Tolerance model] are
// calibrated on ddpbench's own models, and a user's model can amplify the rounding that every
// valid summation order makes until a correct data-parallel run exceeds them: BatchNorm over a few
// samples, 1x1 spatial maps, updates many times the size of the parameter (measured on scripted
// torchvision models, reports/METRICS.md, "Rounding floor": shufflenet_v2_x0_5 at world 3 with 2
// samples per rank, float32 lockstep, a gradient 1.4e-4 apart against a limit of 2e-5; the same
// model with 4 samples per rank in float64, free-running, final parameters 85 of 170 outside atol
// 1e-12 + rtol 1e-10). So when a check fails at its fixed limit, the reference is trained again
// beside a twin that computes the same training with the rank gradients summed the way ranks sum
// them, each rank chunk backpropagated on its own (training/floor_measurement.h): the twin and
// the judged mode each differ from the reference by one valid reordering of the same sums, and
// the twin's distance is the floor of each tensor at each step. In lockstep the twin takes every
// step from the reference's state (that step's rounding); free-running it trains its own
// trajectory (what the model's conditioning makes of rounding over the steps). An item beyond its
// check's fixed limit passes when it is within kFloorMultiple x its floor (measured: the modes
// stay within 1.1 x it, METRICS.md). Where a tensor's floor exceeds the square root of the run's
// unit roundoff (relative to its scale: 3.5e-4 in float32, 1.5e-8 in float64), reordering a sum
// alone moves it past half its digits and the run's precision cannot resolve it: an item of it
// beyond the fixed limit is then neither passed nor failed but counted `incomparable`, named in
// the report. The floor is measured on the reference alone, so a fault in the judged mode cannot
// widen it; its price is that of Note [Gradients at rounding level]: a fault smaller than
// kFloorMultiple x a tensor's floor is not seen on that tensor (the others still see it). Only a
// check that failed is re-judged: a passing run costs nothing, and no item within its fixed limit
// changes.
// The multiple is reports::kFloorMultiple (reports/run/verdict.h).
class MeasuredFloors {
 public:
  // What the twin was and how it was trained, for the report.
  std::string how;
  // The largest floor used, relative to the tensor's scale: sqrt(unit roundoff of the run's dtype).
  double cap = 0.0;
  // Free-running under autocast: a judged mode's own loss or gradient past `cap` of its scale
  // after the first step parts it too (Note [Parted trajectories]; compare_modes applies it).
  bool judged_mode_parts = false;

  // Per run-global step and parameter (the trace's param_names order): the twin's recorded
  // gradient minus the reference's, in the record's form (a full gradient or a [4] fingerprint);
  // undefined where the parameter had none.
  void set_gradient_diffs(int64_t step, std::vector<at::Tensor> diffs);
  const at::Tensor* gradient_diff(int64_t step, size_t parameter) const;

  // A floor already in its check's measure, by (check, step, tensor): the loss (absolute), a
  // buffer after the step (absolute max), an update (lockstep's normalized update error of the
  // twin's against the reference's), a final parameter or buffer (absolute max; step -1).
  void set(reports::Stage check, int64_t step, const std::string& tensor, double floor);
  // 0 where nothing was measured; infinite at a parted step (and for the final state, step -1,
  // of a run that parted).
  double get(reports::Stage check, int64_t step, const std::string& tensor) const;

  // (Note [Parted trajectories]) Free-running under autocast, the first step at which the twin's
  // trajectory (or the judged mode's own, after the first step) left the reference's beyond what
  // the run's precision resolves (a loss or a gradient past `cap` of its scale). From it on,
  // nothing beyond its fixed limit is comparable.
  void set_parted(int64_t step, std::string why);
  // Whether `step` is at or after the parted step; step -1 (the final state) when any parted.
  bool parted(int64_t step) const;
  int64_t parted_step() const { return parted_step_; }
  const std::string& parted_why() const { return parted_why_; }

  // Nothing measured: `how` says why (a twin that did not compute what the reference computes).
  bool empty() const { return values_.empty() && gradient_diffs_.empty(); }

 private:
  std::map<std::tuple<reports::Stage, int64_t, std::string>, double> values_;
  std::map<int64_t, std::vector<at::Tensor>> gradient_diffs_;
  int64_t parted_step_ = -1;
  std::string parted_why_;
};

// What floor_limit gives an item whose floor is above its cap: the run's precision cannot resolve
// it (CheckBuilder counts it incomparable when it is beyond the fixed limit).
inline constexpr double kUnresolved = std::numeric_limits<double>::infinity();

// The limit an item is held to given its floor, all in the check's measure: `limit` when the
// floor is unmeasured or within `limit` / kFloorMultiple, kUnresolved above `cap`, else
// kFloorMultiple x `floor`.
double floor_limit(double floor, double limit, double cap);

// The limit of parameter `parameter`'s recorded gradient `ref` at `step`, judged with `level`
// (Note [Gradients at rounding level]): its floor is the twin's normalized error against `ref`
// on the same scale, so that the item and its floor are measured alike. `level.limit` when no
// floor was measured (`floors` null).
//
// Normalized items (gradients, updates, zero against ddp) take floors->cap as it is; items
// judged elementwise within atol + rtol |ref| (the loss, buffers, final state) take
// tolerance_floor_limit.
double gradient_floor_limit(const MeasuredFloors* floors, int64_t step, size_t parameter,
                            const at::Tensor& ref, bool fingerprint, const RoundingLevel& level);

// The limit of a kTolerance item (its worst ratio to atol + rtol |ref| is `ratio`, its largest
// difference `max_abs`, the largest |ref| it was scaled by `ref_max_abs`) under the absolute floor
// floors->get(check, step, tensor): it passes when max_abs <= kFloorMultiple x floor, which on
// the ratio's scale is the floor times ratio / max_abs; the cap, floors->cap x ref_max_abs, on the
// same scale. 0 when `floors` is null.
double tolerance_floor_limit(const MeasuredFloors* floors, reports::Stage check, int64_t step,
                             const std::string& tensor, double ratio, double max_abs,
                             double ref_max_abs);

// A normalized item's limit under a floor already in its measure (`floor`, from floors->get).
double normalized_floor_limit(const MeasuredFloors* floors, double floor, double limit);

}  // namespace ddpbench::compare
