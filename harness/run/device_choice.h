// device_choice.h — which device kind a run trains on, from --device, --share-gpus, --backend and
// the world size, against the devices this machine offers; decided before anything starts. A
// pure function of its inputs, so every refusal is tested on machines without a GPU.
#pragma once

#include <cstdint>
#include <string>

#include "comm/backend_support.h"
#include "requests/run_request.h"
#include "runtime/execution_context.h"

namespace ddpbench::run {

struct DeviceQuestion {
  requests::DeviceChoice device = requests::DeviceChoice::kAuto;
  bool share_gpus = false;
  comm::Backend backend = comm::default_backend();
  int64_t world_size = 1;
  bool dp = false;               // DataParallel replicas run (one per device)
  bool ddp = false;              // DDP ranks run (one per device)
  bool self_launched = true;     // ddpbench spawns the ranks on this machine (else a launcher
                                 // placed them, possibly across nodes)
  int usable_devices = 0;        // runtime::GpuInfo::usable_devices
  std::string no_device_reason;  // runtime::GpuInfo::status when there is none
};

// Throws InputError (exit 2) naming the problem and the fix: --device cuda without a usable
// device; more DP replicas or local DDP ranks than devices without --share-gpus; NCCL with two
// ranks on one device (NCCL refuses it: "Duplicate GPU detected").
runtime::DeviceKind choose_device(const DeviceQuestion& q);

}  // namespace ddpbench::run
