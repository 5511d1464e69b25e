// autocast_scope.cpp — see autocast_scope.h.
#include "scenarios/optim/autocast_scope.h"

#include <ATen/autocast_mode.h>

#include "errors.h"
#include "scenarios/optim/torch_version_compat.h"

namespace ddpbench::scenarios {

AutocastScope::AutocastScope(c10::DeviceType device, c10::ScalarType dtype)
    : device_(device),
      was_enabled_(compat::autocast_enabled(device)),
      was_dtype_(compat::autocast_dtype(device)) {
  if (const auto why = compat::amp_unsupported(device, dtype)) throw InputError(*why);
  compat::set_autocast(device, true, dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  compat::set_autocast(device_, was_enabled_, was_dtype_);
}

}  // namespace ddpbench::scenarios
