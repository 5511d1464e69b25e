// mode_kind.cpp — see mode_kind.h.
#include "modes/common/mode_kind.h"

#include <algorithm>

namespace ddpbench::modes {

const char* mode_name(ModeKind mode) {
  switch (mode) {
    case ModeKind::kSingle:
      return "single";
    case ModeKind::kDataParallel:
      return "dp";
    case ModeKind::kDdp:
      return "ddp";
    case ModeKind::kZero:
      return "zero";
  }
  return "?";
}

std::optional<ModeKind> parse_mode(const std::string& name) {
  for (ModeKind m : {ModeKind::kSingle, ModeKind::kDataParallel, ModeKind::kDdp, ModeKind::kZero}) {
    if (name == mode_name(m)) return m;
  }
  return std::nullopt;
}

const char* known_mode_names() { return "single, dp, ddp, zero"; }

bool has_mode(const std::vector<ModeKind>& modes, ModeKind mode) {
  return std::find(modes.begin(), modes.end(), mode) != modes.end();
}

bool runs_per_rank(ModeKind mode) { return mode == ModeKind::kDdp || mode == ModeKind::kZero; }

std::vector<ModeKind> per_rank_modes(const std::vector<ModeKind>& modes) {
  std::vector<ModeKind> out;
  for (ModeKind m : modes) {
    if (runs_per_rank(m)) out.push_back(m);
  }
  return out;
}

}  // namespace ddpbench::modes
