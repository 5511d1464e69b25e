// script_scenario.h — `--model FILE.pt`: the user's TorchScript model in place of a scenario's
// built-in one. The base scenario (--scenario or --config) still supplies the data, loss,
// optimizer, tolerances and evaluation set; the model's weights come from the file, the same in
// every phase, mode, replica and rank. The model is named in reports by the file's SHA-256, so
// the gate refuses to compare runs of different files.
#pragma once

#include <string>

#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

// `base` with the model of `file`, named "TorchScript sha256:<the file's 64 hex digits>". Throws InputError (one line) when the file cannot be read or
// cannot train (scenarios/models/script_model.h says which files).
ScenarioSpec with_script_model(ScenarioSpec base, const std::string& file);

}  // namespace ddpbench::scenarios
