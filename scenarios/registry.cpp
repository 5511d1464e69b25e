// registry.cpp — see registry.h.
#include "scenarios/registry.h"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)

#include <stdexcept>

#include "errors.h"
#include "quoted_input.h"

namespace ddpbench::scenarios {

void ScenarioRegistry::add(ScenarioSpec spec) {
  for (const auto& s : specs_) {
    if (s.name == spec.name) throw std::logic_error("duplicate scenario " + spec.name);
  }
  specs_.push_back(std::move(spec));
}

const ScenarioSpec& ScenarioRegistry::get(const std::string& name) const {
  for (const auto& s : specs_) {
    if (s.name == name) return s;
  }
  throw InputError(fmt::format("unknown scenario {}: known scenarios are {} (see `ddpbench list`)",
                               quoted_input(name), fmt::join(names(), ", ")));
}

std::vector<std::string> ScenarioRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& s : specs_) out.push_back(s.name);
  return out;
}

ScenarioRegistry builtin_registry() {
  ScenarioRegistry r;
  add_builtin_scenarios(r);
  return r;
}

}  // namespace ddpbench::scenarios
