// checkpoint_optimizer.h — a checkpoint's optimizer part, as PyTorch's optimizer.state_dict()
// lays it out: "state" maps each parameter's index to its state by PyTorch's names (SGD:
// momentum_buffer; Adam: step, exp_avg, exp_avg_sq), a parameter without state (before its first
// step) has no entry, and one param group holds the hyper-parameters and the indices. The one
// place that knows TrainingState's optimizer layout, out and in.
#pragma once

#include <ATen/core/Dict.h>

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_file.h"
#include "modes/common/training_state.h"
#include "scenarios/scenario.h"

namespace ddpbench::checkpoint {

// `s`'s optimizer state as optimizer.state_dict() holds it: its parameter groups from `names`
// (the model's parameter names, OPTIM.NO_DECAY's rules), their lr the schedule's at `next_step`.
c10::impl::GenericDict optimizer_state_dict(const modes::TrainingState& s,
                                            const scenarios::OptimizerSpec& spec,
                                            const std::vector<std::string>& names,
                                            int64_t next_step);

// The inverse: fills s.optimizer_state (one map per parameter, empty where the file has no
// entry), each state tensor checked against what `spec`'s optimizer keeps, and each but Adam's
// scalar step against its parameter's shape and dtype. Throws InputError.
void read_optimizer_state(const c10::impl::GenericDict& optimizer,
                          const scenarios::OptimizerSpec& spec,
                          const std::vector<std::string>& names, int64_t steps,
                          const TorchFile& file, const std::string& path, modes::TrainingState& s);

}  // namespace ddpbench::checkpoint
