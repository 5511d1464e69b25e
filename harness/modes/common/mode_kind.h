// mode_kind.h — the execution modes, as the run trains them: ModeKind is reports::Mode, whose rows
// (reports/run/record_enums.h, Note [One row per mode]) give each mode its one name, whether it runs
// one process per rank, its help line and its colour. Here: the questions the run asks of them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reports/run/record_enums.h"

namespace ddpbench::modes {

// kSingle: the reference, one device, the whole global batch; kDp: one process, K replicas
// (torch.nn.DataParallel semantics); kDdp: one process per rank (DistributedDataParallel
// semantics); kZero: one process per rank, sharded (ZeRO stages 1-3: modes/zero/zero_path.h).
using ModeKind = reports::Mode;

// Every mode, in the rows' order.
std::vector<ModeKind> all_modes();
// "single", "dp", "ddp", "zero".
const char* mode_name(ModeKind mode);
// nullopt for anything else.
std::optional<ModeKind> parse_mode(const std::string& name);
// "single, dp, ddp, zero": for error messages and help texts.
std::string known_mode_names();
// "single,ddp": `modes` as --modes spells them.
std::string joined_mode_names(const std::vector<ModeKind>& modes);
// "single (the reference: ...), dp (...), ...": --modes' help.
std::string modes_help();

// Whether `modes` contains `mode`.
bool has_mode(const std::vector<ModeKind>& modes, ModeKind mode);

// Whether `mode` runs one process per rank (ddp, zero), over a backend and a launch.
bool runs_per_rank(ModeKind mode);
// The modes of `modes` that run one process per rank, in `modes`' order.
std::vector<ModeKind> per_rank_modes(const std::vector<ModeKind>& modes);

}  // namespace ddpbench::modes
