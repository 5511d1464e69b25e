// rounding_floor.cpp — see rounding_floor.h.
#include "compare/rounding_floor.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

namespace ddpbench::compare {

void MeasuredFloors::set_gradient_diffs(int64_t step, std::vector<at::Tensor> diffs) {
  gradient_diffs_[step] = std::move(diffs);
}

const at::Tensor* MeasuredFloors::gradient_diff(int64_t step, size_t parameter) const {
  const auto it = gradient_diffs_.find(step);
  if (it == gradient_diffs_.end() || parameter >= it->second.size() ||
      !it->second[parameter].defined()) {
    return nullptr;
  }
  return &it->second[parameter];
}

void MeasuredFloors::set(reports::Stage check, int64_t step, const std::string& tensor,
                         double floor) {
  values_[{check, step, tensor}] = floor;
}

double MeasuredFloors::get(reports::Stage check, int64_t step, const std::string& tensor) const {
  if (parted(step)) return std::numeric_limits<double>::infinity();
  const auto it = values_.find({check, step, tensor});
  return it == values_.end() ? 0.0 : it->second;
}

void MeasuredFloors::set_parted(int64_t step, std::string why) {
  if (parted_step_ >= 0 && parted_step_ <= step) return;
  parted_step_ = step;
  parted_why_ = std::move(why);
}

bool MeasuredFloors::parted(int64_t step) const {
  return parted_step_ >= 0 && (step < 0 || step >= parted_step_);
}

double floor_limit(double floor, double limit, double cap) {
  // NaN (a twin that diverged) is no floor.
  if (!(floor * reports::kFloorMultiple > limit)) return limit;
  if (floor > cap) return kUnresolved;
  return reports::kFloorMultiple * floor;
}

double tolerance_floor_limit(const MeasuredFloors* floors, reports::Stage check, int64_t step,
                             const std::string& tensor, double ratio, double max_abs,
                             double ref_max_abs) {
  if (floors == nullptr || !(max_abs > 0) || !std::isfinite(ratio)) return 0.0;
  const double per_abs = ratio / max_abs;
  return floor_limit(floors->get(check, step, tensor) * per_abs, 1.0,
                     floors->cap * ref_max_abs * per_abs);
}

double normalized_floor_limit(const MeasuredFloors* floors, double floor, double limit) {
  return floors == nullptr ? 0.0 : floor_limit(floor, limit, floors->cap);
}

double gradient_floor_limit(const MeasuredFloors* floors, int64_t step, size_t parameter,
                            const at::Tensor& ref, bool fingerprint, const RoundingLevel& level) {
  if (floors != nullptr && floors->parted(step)) return kUnresolved;
  const at::Tensor* diff = floors != nullptr ? floors->gradient_diff(step, parameter) : nullptr;
  if (diff == nullptr || !ref.defined() || !diff->sizes().equals(ref.sizes())) return level.limit;
  const at::Tensor r = ref.detach().to(at::kCPU, at::kDouble);
  return floor_limit(normalized_gradient_error(r + *diff, r, fingerprint, level), level.limit,
                     floors->cap);
}

}  // namespace ddpbench::compare
