// grad_scaler.cpp — see grad_scaler.h. Each step mirrors a line of torch/amp/grad_scaler.py's
// GradScaler (unscale_, step's skip test, update), which is the reference the tests compare with.
#include "scenarios/optim/grad_scaler.h"

#include <ATen/ATen.h>

#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "errors.h"
#include "scenarios/optim/torch_version_compat.h"

namespace ddpbench::scenarios {

GradScaler::GradScaler(const GradScalerOptions& options, c10::Device device) : options_(options) {
  if (const auto why = compat::amp_unsupported(device.type(), at::kHalf)) throw InputError(*why);
  const auto on = at::TensorOptions().device(device);
  scale_ = at::full({}, options.init_scale, on.dtype(at::kFloat));
  growth_tracker_ = at::full({}, 0, on.dtype(at::kInt));
}

at::Tensor GradScaler::scale(const at::Tensor& loss) const {
  return loss * scale_.to(loss.device());
}

void GradScaler::unscale(const std::vector<at::Tensor>& gradients) {
  if (unscaled_) throw std::logic_error("GradScaler::unscale called twice before update");
  // FP32 division can be imprecise for certain compile options, so PyTorch carries out the
  // reciprocal in FP64 (grad_scaler.py): the same bits here.
  const at::Tensor inv_scale = scale_.to(at::kDouble).reciprocal().to(at::kFloat);
  std::map<std::pair<std::string, c10::ScalarType>, std::vector<at::Tensor>> groups;
  std::map<std::string, at::Tensor> found_per_device;
  for (const at::Tensor& g : gradients) {
    if (!g.defined()) continue;
    if (g.scalar_type() == at::kHalf) {
      throw std::logic_error("GradScaler: attempting to unscale float16 gradients");
    }
    const std::string device = g.device().str();
    groups[{device, g.scalar_type()}].push_back(g);
    if (found_per_device.count(device) == 0) {
      found_per_device[device] = at::full({}, 0.0, g.options().dtype(at::kFloat));
    }
  }
  found_inf_per_device_.clear();
  for (auto& [key, grads] : groups) {
    at::Tensor& found = found_per_device.at(key.first);
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found, inv_scale.to(found.device()));
  }
  for (auto& [device, found] : found_per_device) found_inf_per_device_.push_back(found);
  // No gradient at all: nothing was inf (update still needs a flag on the scale's device).
  if (found_inf_per_device_.empty())
    found_inf_per_device_.push_back(at::zeros({}, scale_.options()));
  unscaled_ = true;
}

bool GradScaler::found_inf() const {
  double sum = 0;
  for (const at::Tensor& f : found_inf_per_device_) sum += f.item<double>();
  return sum != 0;
}

void GradScaler::agree_on_overflow(const std::function<void(at::Tensor&)>& sum) {
  if (!unscaled_) throw std::logic_error("GradScaler::agree_on_overflow before unscale");
  at::Tensor total = at::zeros({1}, scale_.options().dtype(at::kFloat));
  for (const at::Tensor& f : found_inf_per_device_) total.add_(f.to(total.device()).reshape({1}));
  sum(total);
  found_inf_per_device_ = {total.reshape({})};
}

void GradScaler::update() {
  if (!unscaled_) throw std::logic_error("GradScaler::update without an unscale since the last");
  at::Tensor combined = found_inf_per_device_[0].to(scale_.device());
  for (size_t i = 1; i < found_inf_per_device_.size(); ++i) {
    combined = combined + found_inf_per_device_[i].to(scale_.device());
  }
  at::_amp_update_scale_(scale_, growth_tracker_, combined, options_.growth_factor,
                         options_.backoff_factor, options_.growth_interval);
  found_inf_per_device_.clear();
  unscaled_ = false;
}

double GradScaler::current_scale() const { return scale_.item<double>(); }

int64_t GradScaler::growth_tracker() const { return growth_tracker_.item<int64_t>(); }

void GradScaler::set_state(const at::Tensor& scale, const at::Tensor& growth_tracker) {
  scale_.copy_(scale.reshape({}));
  growth_tracker_.copy_(growth_tracker.reshape({}));
}

}  // namespace ddpbench::scenarios
