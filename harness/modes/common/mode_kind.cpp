// mode_kind.cpp — see mode_kind.h. Every answer reads reports::kModeSpecs.
#include "modes/common/mode_kind.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace ddpbench::modes {

std::vector<ModeKind> all_modes() {
  std::vector<ModeKind> out;
  for (const reports::ModeSpec& m : reports::kModeSpecs) out.push_back(m.mode);
  return out;
}

const char* mode_name(ModeKind mode) {
  // The rows' names are string literals: their data is 0-terminated.
  return reports::mode_spec(mode).name.data();
}

std::optional<ModeKind> parse_mode(const std::string& name) {
  for (const reports::ModeSpec& m : reports::kModeSpecs) {
    if (name == m.name) return m.mode;
  }
  return std::nullopt;
}

std::string known_mode_names() {
  std::vector<std::string_view> names;
  for (const reports::ModeSpec& m : reports::kModeSpecs) names.push_back(m.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

std::string joined_mode_names(const std::vector<ModeKind>& modes) {
  std::vector<std::string> names;
  for (ModeKind m : modes) names.emplace_back(mode_name(m));
  return fmt::format("{}", fmt::join(names, ","));
}

std::string modes_help() {
  std::vector<std::string> parts;
  for (const reports::ModeSpec& m : reports::kModeSpecs) {
    parts.push_back(fmt::format("{} ({})", m.name, m.help));
  }
  return fmt::format("Comma-separated modes: {}", fmt::join(parts, ", "));
}

bool has_mode(const std::vector<ModeKind>& modes, ModeKind mode) {
  return std::find(modes.begin(), modes.end(), mode) != modes.end();
}

bool runs_per_rank(ModeKind mode) { return reports::mode_spec(mode).per_rank; }

std::vector<ModeKind> per_rank_modes(const std::vector<ModeKind>& modes) {
  std::vector<ModeKind> out;
  for (ModeKind m : modes) {
    if (runs_per_rank(m)) out.push_back(m);
  }
  return out;
}

}  // namespace ddpbench::modes
