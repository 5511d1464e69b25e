// default_comparison.h — what `ddpbench run` compares when it is told neither --modes nor --gpus.
// A pure function of the request and the machine's device count, so the defaults are tested on
// machines without a GPU.
#pragma once

#include <cstdint>

#include "requests/run_request.h"

namespace ddpbench::run {

// Note [Default comparison]: a bare `ddpbench run` must judge something. Single-device training
// alone has nothing to be compared with, so its verdict would be about nothing; the default is
// every mode (single, dp, ddp): data parallel against single-device training, on every usable GPU
// when the run trains on CUDA, else on kDefaultCpuRanks CPU ranks (the fewest that make DP and
// DDP split a batch). A request that names --modes or --gpus keeps its meaning (--gpus K alone:
// single and ddp for K > 1, single for K = 1). Under an external launcher (torchrun, Slurm,
// mpirun) the launcher decides the world, and no DP runs there, so this does not apply; the ranks
// ddpbench spawns itself apply it too, so that they resolve the modes their parent did.
inline constexpr int64_t kDefaultCpuRanks = 2;
// A bare run (no --steps, no --config, no KEY VALUE overrides) trains at most this many of the
// scenario's steps, on any device (a spawned rank resolves its parent's steps without knowing the
// parent's device count): three modes of cifar_resnet18 at its 10 steps took
// over 20 minutes on a loaded 2-core machine, and the README's first command must reach its
// verdict in minutes. Three steps judge every check (a first divergence is in the first steps);
// the timing is flagged weak (too few timed steps), which it is.
inline constexpr int64_t kBareCpuSteps = 3;

// `request` with modes and world size filled in by Note [Default comparison] (and the cap of
// kBareCpuSteps when it names no step count or scenario file), or unchanged when it names either.
// `usable_devices`: runtime::GpuInfo::usable_devices of this machine.
requests::RunRequest with_default_comparison(requests::RunRequest request, int usable_devices);

}  // namespace ddpbench::run
