// data_file.h — `ddpbench run --data FILE.pt`: the user's own tensors as the run's training data,
// a dict {"inputs": Tensor[N, ...], "targets": Tensor[N]} written by torch.save, for a --model
// file (or a built-in model) on data no scenario generates. The scenario still gives the loss,
// optimizer and tolerances; sample i is (inputs[i], targets[i]) in every mode, rank and replica.
// The report names the data by the file's content hash (a path differs between machines), so the
// gate refuses to compare runs on two files. The file is read by the bounded reader --resume
// uses (checkpoint/checkpoint_file.h): a damaged or hostile file is refused, not trusted.
#pragma once

#include <string>

#include "scenarios/scenario.h"

namespace ddpbench::inputs {

// `spec` training on the tensors of `file`, without an evaluation split. Throws InputError, one
// line naming the file, the problem and the fix: unreadable, not a torch.save file, not such a
// dict, sample counts that differ, an input dtype other than floating or int64, targets that do
// not fit the scenario's loss (int64 class indices for cross entropy, floating for MSE),
// NaN or infinity.
scenarios::ScenarioSpec with_data_file(scenarios::ScenarioSpec spec, const std::string& file);

}  // namespace ddpbench::inputs
