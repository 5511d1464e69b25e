// device_choice.cpp — see device_choice.h.
#include "run/device_choice.h"

#include <fmt/format.h>

#include "errors.h"

namespace ddpbench::run {

runtime::DeviceKind choose_device(const DeviceQuestion& q) {
  if (q.device == requests::DeviceChoice::kCpu) return runtime::DeviceKind::kCpu;
  if (q.usable_devices == 0) {
    if (q.device == requests::DeviceChoice::kCuda) {
      throw InputError(
          fmt::format("--device cuda: {}; use --device cpu (or auto)", q.no_device_reason));
    }
    return runtime::DeviceKind::kCpu;
  }
  // With an external launcher the world may span nodes; each rank checks its own local slot
  // (run_as_rank), so only self-launched worlds are counted here.
  const bool per_device = q.dp || (q.ddp && q.self_launched);
  if (per_device && q.world_size > q.usable_devices) {
    if (q.ddp && q.self_launched && comm::traits(q.backend).one_rank_per_device) {
      throw InputError(fmt::format(
          "--gpus {} with --backend {} needs {} CUDA devices and {} {} usable: it refuses two "
          "ranks on one GPU; lower --gpus to {}, or use --backend {} --share-gpus",
          q.world_size, comm::backend_name(q.backend), q.world_size, q.usable_devices,
          q.usable_devices == 1 ? "is" : "are", q.usable_devices,
          comm::backend_name(comm::default_backend())));
    }
    if (!q.share_gpus) {
      throw InputError(fmt::format(
          "--gpus {} needs {} CUDA devices for one {} per device, and {} {} usable; add "
          "--share-gpus to place several on one device, lower --gpus, or use --device cpu",
          q.world_size, q.world_size, q.dp && !q.ddp ? "replica" : "rank/replica", q.usable_devices,
          q.usable_devices == 1 ? "is" : "are"));
    }
  }
  return runtime::DeviceKind::kCuda;
}

}  // namespace ddpbench::run
