// scenario_config.h — a scenario configured from a YAML file and/or KEY VALUE overrides on top of
// a built-in (`ddpbench run --config f.yaml TRAIN.STEPS 2`, `run --scenario toy_cnn
// OPTIM.BASE_LR 0.01`), and a scenario written back as such a file (`ddpbench list --yaml`).
// The keys, their types and their fields are scenario_keys.h's one table.
//
// Precedence, lowest first: the base built-in, the file, the overrides in the order given, the
// flags that set a key (--model, --data, --input-shape, --loss, ...); the run's flags (--steps,
// --batch-size, --seed, --dtype, --sync-bn) then override the scenario's defaults as they do
// for a built-in. A key set twice in one place (twice in the file, twice on
// the command line) is an error: which one wins would be an accident.
#pragma once

#include <string>
#include <vector>

#include "scenarios/registry.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

// The key a file names its built-in base with (the model and data are code).
inline constexpr const char* kBaseKey = "SCENARIO.BASE";

// A run flag that sets a scenario key (--model sets MODEL.FILE, --input-shape DATA.INPUT_SHAPE).
struct FlagKey {
  std::string flag;  // "--input-shape"
  std::string key;   // "DATA.INPUT_SHAPE"
  std::string value;
};

struct ScenarioSource {
  // A built-in's name; with a config file, the file names its base instead.
  std::string scenario;
  // A YAML scenario file; empty = none.
  std::string config;
  // KEY VALUE KEY VALUE ... applied after the file.
  std::vector<std::string> overrides;
  // Flags given, applied last: a flag wins over the same key in the file or the overrides.
  std::vector<FlagKey> flags;

  bool configured() const { return !config.empty() || !overrides.empty() || !flags.empty(); }
};

// The scenario `source` describes: the built-in itself when nothing configures it, else a copy
// with the file's and the overrides' keys applied and `base` and `configured_by` set. Throws
// InputError, one line naming the file and line or the override, the key, the value and what
// was expected: unknown key (with near matches), wrong type, unreadable file, YAML syntax error,
// missing or unknown base, a key set twice, an odd number of override words, and combinations
// torch would refuse (Nesterov without momentum) or that would not mean what they say (a loss
// for other targets than the data's, synthetic data half described or beside a data file,
// tolerances changed without a new reason). A relative path key in the file is made relative to
// the file's folder. Synthetic data whose loss was not set gets the loss its targets take
// (cross_entropy for classes, mse for regression targets).
ScenarioSpec configure_scenario(const ScenarioRegistry& registry, const ScenarioSource& source);

// "--config f.yaml TRAIN.STEPS 2": the arguments that configured the scenario; empty when
// nothing did.
std::string describe_source(const ScenarioSource& source);

// `spec` as a scenario file: SCENARIO.BASE, then every key of the table with its value and a
// comment saying what it sets. configure_scenario() reads it back to the same spec.
std::string scenario_yaml(const ScenarioSpec& spec);

// `ddpbench list --keys`: every key, its type and what it sets, one per line.
std::string scenario_keys_text();

}  // namespace ddpbench::scenarios
