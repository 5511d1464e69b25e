// optimizer_state.h — one parameter's optimizer state as plain tensors under PyTorch's state_dict
// names, for every optimizer make_optimizer builds: SGD "momentum_buffer"; Adam and AdamW "step",
// "exp_avg", "exp_avg_sq". The lockstep comparison copies it from the reference into the judged
// mode before every step (modes/common/training_state.h), and checkpoints store it.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <string>
#include <vector>

namespace torch::optim {
class Optimizer;
}

namespace ddpbench::scenarios {

struct OptimizerSpec;

using ParameterState = std::map<std::string, at::Tensor>;

// The state of `parameter` in `optimizer` (the tensors themselves, not copies): empty before its
// first step (and always for SGD without momentum). Adam's "step" is a 0-dim float32 tensor, as
// torch.optim.Adam keeps it; libtorch counts it as an int64, exact in float32 up to 2^24 steps.
// Throws std::logic_error for an optimizer make_optimizer does not build.
ParameterState parameter_state(torch::optim::Optimizer& optimizer, const at::Tensor& parameter);

// Replaces the state of `parameter`; an empty map clears it. The tensors are used as given (the
// caller puts them on the parameter's device). Throws std::logic_error when a name the optimizer
// needs is missing or one it does not keep is present.
void set_parameter_state(torch::optim::Optimizer& optimizer, const at::Tensor& parameter,
                         const ParameterState& state);

// A zero tensor shaped like the state entry `name` of `parameter`, on the host: what a process
// receives a broadcast entry into.
at::Tensor empty_state_entry(const std::string& name, const at::Tensor& parameter);

// Bytes of the state `optimizer` holds now for every parameter it steps, counted from its tensors
// (what a zero rank's memory footprint reports: 1/K of a plain optimizer's).
int64_t state_bytes(torch::optim::Optimizer& optimizer);

// The state names `spec`'s optimizer keeps per parameter: Adam's three, SGD's momentum_buffer
// with momentum, none for plain SGD.
std::vector<std::string> kept_state_names(const OptimizerSpec& spec);

// Every state name, in one fixed order (the order a broadcast of present names follows).
const std::vector<std::string>& state_names();

// Whether the state entry `name` is a tensor shaped like its parameter, which sharding cuts and
// checks compare element by element: every entry but Adam's "step", a count, the same on every
// rank.
bool shaped_like_parameter(const std::string& name);

}  // namespace ddpbench::scenarios
