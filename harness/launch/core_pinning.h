// core_pinning.h — Note [Pinned ranks]: each rank ddpbench spawns pins itself to cores of its own,
// as PyTorch's CPU launcher (torch.backends.xeon.run_cpu) and numactl-based launches do, so that
// the OS cannot put two ranks on one core for a whole run.
//
// Note [Pinned ranks]
// Measured on the project's 2-core machine (toy_cnn, ddp, 2 ranks, 100 timed steps, 10 runs
// each): unpinned, the runs' median steps spread with a CV of 20% (3.15-5.72 ms) because some
// runs start with both ranks on one core and stay there; each rank pinned to its own core, the
// spread fell to 4.9% (2.73-3.11 ms) and the step got 30% faster. A gate compares runs, so what
// varies between runs is what it must not measure. Rank r of K takes cores [r*T, (r+1)*T) of the
// cores this process may use (T = its intra-op threads), only when K x T fit; pinning is then on
// by default and `--no-pin-cores` turns it off. Ranks started by torchrun, mpirun or Slurm are
// placed by their launcher and never pinned here. report.json records what was done
// (config.cpu_pinning), and the gate refuses runs pinned differently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ddpbench::launch {

// The cores this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cores();

// Rank `rank`'s cores when `world` ranks of `threads` threads each fit in `allowed`; none
// otherwise.
std::optional<std::vector<int>> rank_cores(int64_t rank, int64_t world, int64_t threads,
                                           const std::vector<int>& allowed);

// What config.cpu_pinning says for a run whose ranks ddpbench spawns (`spawned`) or another
// launcher started, with --no-pin-cores (`wanted` false) or not.
std::string pinning_description(bool spawned, bool wanted, int64_t world, int64_t threads,
                                const std::vector<int>& allowed);

// Pins this process (and the threads it starts from now on) to `cores`; false when the OS
// refused (the run goes on unpinned, as config.cpu_pinning cannot know: rare, e.g. a cgroup
// change mid-run).
bool pin_process(const std::vector<int>& cores);

}  // namespace ddpbench::launch
