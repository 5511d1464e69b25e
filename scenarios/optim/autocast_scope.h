// autocast_scope.h — what `with torch.autocast(device_type, dtype):` does, for C++: while a scope
// lives, eligible ops on that device type run in the lower precision (bfloat16 or float16) and
// parameters stay in float32. Every mode enters one around its forward and loss (issue 34), so
// they autocast the same ops; backward runs outside it, as in PyTorch.
#pragma once

#include <c10/core/DeviceType.h>
#include <c10/core/ScalarType.h>

namespace ddpbench::scenarios {

class AutocastScope {
 public:
  // Enables autocast to `dtype` on `device` (CPU or CUDA). Throws InputError where this libtorch
  // cannot (compat::amp_unsupported: float16 on 1.13's CPU).
  AutocastScope(c10::DeviceType device, c10::ScalarType dtype);
  // Restores the previous setting; the outermost scope also drops autocast's cache of cast
  // weights, as the Python context manager does (`if decrement_nesting() == 0: clear_cache()`),
  // so that a weight updated by the optimizer is cast afresh in the next forward.
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_;
  bool was_enabled_;
  c10::ScalarType was_dtype_;
};

}  // namespace ddpbench::scenarios
