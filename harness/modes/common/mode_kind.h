// mode_kind.h — the execution modes and the names users type for them (--modes, report
// fields). Every place that means a mode says ModeKind; the strings live only here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace ddpbench::modes {

enum class ModeKind {
  kSingle,        // the reference: one device, the whole global batch
  kDataParallel,  // one process, K replicas (torch.nn.DataParallel semantics)
  kDdp,           // one process per rank (DistributedDataParallel semantics)
  kZero,          // one process per rank, sharded (ZeRO stages 1 and 2: modes/zero/zero_path.h)
};

// "single", "dp", "ddp", "zero".
const char* mode_name(ModeKind mode);
// nullopt for anything else.
std::optional<ModeKind> parse_mode(const std::string& name);
// "single, dp, ddp, zero": for error messages and help texts.
const char* known_mode_names();

// Whether `modes` contains `mode`.
bool has_mode(const std::vector<ModeKind>& modes, ModeKind mode);

// Whether `mode` runs one process per rank (ddp, zero), over a backend and a launch.
bool runs_per_rank(ModeKind mode);
// The modes of `modes` that run one process per rank, in `modes`' order.
std::vector<ModeKind> per_rank_modes(const std::vector<ModeKind>& modes);

}  // namespace ddpbench::modes
