// mode_kind.h — the three execution modes and the names users type for them (--modes, report
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
};

// "single", "dp", "ddp".
const char* mode_name(ModeKind mode);
// nullopt for anything else.
std::optional<ModeKind> parse_mode(const std::string& name);
// "single, dp, ddp": for error messages and help texts.
const char* known_mode_names();

// Whether `modes` contains `mode`.
bool has_mode(const std::vector<ModeKind>& modes, ModeKind mode);

}  // namespace ddpbench::modes
