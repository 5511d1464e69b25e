// registry.h — the scenario registry: look-up by name with an error that lists what exists.
// Built by value in main and passed down (no global registry).
#pragma once

#include <string>
#include <vector>

#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

inline constexpr const char* kDefaultScenario = "cifar_resnet18";

class ScenarioRegistry {
 public:
  // Throws std::logic_error on a duplicate name (a programming error, not user input).
  void add(ScenarioSpec spec);
  // Throws InputError naming the known scenarios.
  const ScenarioSpec& get(const std::string& name) const;
  const std::vector<ScenarioSpec>& all() const { return specs_; }
  std::vector<std::string> names() const;

 private:
  std::vector<ScenarioSpec> specs_;
};

// Every built-in scenario (scenarios/builtin/, one file each), in file-name order.
ScenarioRegistry builtin_registry();
// Adds them to `registry`; defined in the file the build generates from scenarios/builtin/.
void add_builtin_scenarios(ScenarioRegistry& registry);

}  // namespace ddpbench::scenarios
