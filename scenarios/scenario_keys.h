// scenario_keys.h — the one table of what a scenario file (or a KEY VALUE override) may set: each
// key's name, the type it takes, what it means, and how it reads and writes its ScenarioSpec
// field. The parser (scenario_config.h), `ddpbench list --yaml` and `ddpbench list --keys` all
// walk this table, so what is written and what is read cannot disagree. A new data field of
// ScenarioSpec is one row in scenario_keys.cpp.
//
// Keys are upper-case `SECTION.FIELD`, the yacs style of distribuuuu and pycls (TRAIN.BATCH_SIZE,
// OPTIM.BASE_LR). The model and the data are code: a file names the built-in they come from with
// SCENARIO.BASE, which scenario_config.h handles (it picks the starting spec, it sets no field).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

struct ScenarioKey {
  std::string name;  // "TRAIN.BATCH_SIZE"
  // What a value must be, completing "expected ...": "an integer from 1 to 1073741824".
  std::string type;
  std::string help;  // one line: the field it sets, and the flag that overrides it if any
  // The field as text, in the form `set` reads back (numbers in their shortest exact form).
  std::function<std::string(const ScenarioSpec&)> get;
  // Sets the field from text; throws std::invalid_argument when the text is not of `type`.
  std::function<void(ScenarioSpec&, const std::string&)> set;
  // A file path: a relative one in a --config file is relative to that file's folder (a
  // scenario file and its model travel together), and `list --yaml` writes it absolute.
  bool path = false;
};

// Every settable key, grouped by section in the order `list --yaml` writes them.
const std::vector<ScenarioKey>& scenario_keys();

// The row of `name`, or nullptr.
const ScenarioKey* find_scenario_key(const std::string& name);

// The section of a key: "TRAIN" for "TRAIN.BATCH_SIZE".
std::string key_section(const std::string& name);

}  // namespace ddpbench::scenarios
