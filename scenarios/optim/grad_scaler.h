// grad_scaler.h — torch.amp.GradScaler for C++ (libtorch has none): float16 training multiplies
// the loss by a scale so that small gradients do not flush to zero, divides the gradients by it
// before the optimizer, skips the step when any gradient is inf or NaN, and adapts the scale. Every
// mode uses one per replica or rank (issue 34), so the scale schedule, the skipped steps and the
// unscaled gradients must come out the same as PyTorch's, bit for bit:
//   - the state is a float32 scale (init 2^16) and an int32 growth tracker, 0-dim tensors on the
//     scaler's device;
//   - unscale multiplies by scale.double().reciprocal().float() through
//     _amp_foreach_non_finite_check_and_unscale_, one call per (device, dtype) group of gradients,
//     one found_inf flag per device;
//   - update calls _amp_update_scale_ with the flags summed: backoff (x0.5) and a tracker reset on
//     an inf, growth (x2) after `growth_interval` clean steps in a row.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace ddpbench::scenarios {

// torch.amp.GradScaler's constructor arguments, with its defaults.
struct GradScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class GradScaler {
 public:
  // Throws InputError where this libtorch has no kernels for the scaler's ops on `device`
  // (compat::amp_unsupported: 1.13's CPU).
  GradScaler(const GradScalerOptions& options, c10::Device device);

  // loss * scale (GradScaler.scale).
  at::Tensor scale(const at::Tensor& loss) const;
  // GradScaler.unscale_: divides every defined gradient by the scale in place and records whether
  // any is inf or NaN. Once per step, before the optimizer (and before clipping). Throws
  // std::logic_error for float16 gradients (PyTorch refuses to unscale them too) or a second call
  // before update().
  void unscale(const std::vector<at::Tensor>& gradients);
  // After unscale: whether the optimizer step is to be skipped (GradScaler.step's test).
  bool found_inf() const;
  // After unscale, across processes that each unscaled only some of the gradients: `sum`, a
  // collective sum over them, turns this process's flags into one that is nonzero when any
  // process's gradients overflowed (ShardedGradScaler's allreduce of found_inf).
  void agree_on_overflow(const std::function<void(at::Tensor&)>& sum);
  // GradScaler.update: the new scale from this step's flags. Throws std::logic_error without an
  // unscale() since the last update (PyTorch: "No inf checks were recorded prior to update").
  void update();

  double current_scale() const;    // GradScaler.get_scale()
  int64_t growth_tracker() const;  // consecutive clean steps since the last change of scale
  // The state as PyTorch's state_dict holds it ("scale", "_growth_tracker"), for checkpoints and
  // for lockstep's copy from the reference; set_state puts it on the scaler's device.
  at::Tensor scale_tensor() const { return scale_; }
  at::Tensor growth_tracker_tensor() const { return growth_tracker_; }
  void set_state(const at::Tensor& scale, const at::Tensor& growth_tracker);
  const GradScalerOptions& options() const { return options_; }

 private:
  GradScalerOptions options_;
  at::Tensor scale_;           // float32, 0-dim
  at::Tensor growth_tracker_;  // int32, 0-dim
  // One found_inf flag per device the last unscale() saw; empty before it.
  std::vector<at::Tensor> found_inf_per_device_;
  bool unscaled_ = false;
};

}  // namespace ddpbench::scenarios
