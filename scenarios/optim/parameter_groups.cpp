// parameter_groups.cpp — see parameter_groups.h.
#include "scenarios/optim/parameter_groups.h"

#include <stdexcept>

namespace ddpbench::scenarios {

bool without_weight_decay(const std::vector<std::string>& rules, const std::string& name,
                          int64_t dims) {
  for (const std::string& rule : rules) {
    if (rule == kOneDimensionalRule ? dims < 2 : name.find(rule) != std::string::npos) return true;
  }
  return false;
}

std::vector<size_t> no_decay_indices(const std::vector<std::string>& rules,
                                     const std::vector<std::string>& names,
                                     const std::vector<at::Tensor>& parameters) {
  if (rules.empty()) return {};
  if (names.size() != parameters.size()) {
    throw std::logic_error("parameter groups: every parameter needs its name");
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (without_weight_decay(rules, names[i], parameters[i].dim())) out.push_back(i);
  }
  return out;
}

std::vector<ParameterGroupIndices> parameter_group_indices(
    const std::vector<std::string>& rules, const std::vector<std::string>& names,
    const std::vector<at::Tensor>& parameters) {
  const std::vector<size_t> quiet = no_decay_indices(rules, names, parameters);
  ParameterGroupIndices decayed;
  ParameterGroupIndices undecayed{{}, false};
  for (size_t i = 0, next = 0; i < parameters.size(); ++i) {
    const bool no_decay = next < quiet.size() && quiet[next] == i;
    (no_decay ? undecayed : decayed).members.push_back(i);
    if (no_decay) ++next;
  }
  std::vector<ParameterGroupIndices> groups;
  if (!decayed.members.empty() || undecayed.members.empty()) groups.push_back(std::move(decayed));
  if (!undecayed.members.empty()) groups.push_back(std::move(undecayed));
  return groups;
}

}  // namespace ddpbench::scenarios
