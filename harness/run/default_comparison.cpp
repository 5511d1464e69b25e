// default_comparison.cpp — see default_comparison.h.
#include "run/default_comparison.h"

#include "modes/common/mode_kind.h"

namespace ddpbench::run {

requests::RunRequest with_default_comparison(requests::RunRequest request, int usable_devices) {
  if (!request.modes.empty() || request.world_size_given) return request;
  using modes::ModeKind;
  for (ModeKind m : {ModeKind::kSingle, ModeKind::kDp, ModeKind::kDdp}) {
    request.modes.emplace_back(modes::mode_name(m));
  }
  // run/device_choice.h's rule: CUDA unless --device cpu or no device is usable.
  const bool cuda = request.device != requests::DeviceChoice::kCpu && usable_devices > 0;
  request.world_size = cuda ? usable_devices : kDefaultCpuRanks;
  // On any device: a spawned rank applies this without knowing its parent's device count, and
  // must train the parent's steps.
  if (request.steps == 0 && request.config.empty() && request.overrides.empty()) {
    request.max_default_steps = kBareCpuSteps;
  }
  return request;
}

}  // namespace ddpbench::run
