// model_state.h — a model's parameters and buffers as an ordered name -> tensor list (the
// state_dict names), and its serialisation as a pickle that Python's torch.load reads as a dict.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

namespace torch::nn {
class Module;
}

namespace ddpbench::modes {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// A detached copy of `t` in host memory: what records and states hold, whatever the device
// trained on (comparisons, pickles and the outcome file then never touch a device).
at::Tensor host_copy(const at::Tensor& t);

// Host copies of every parameter, then every buffer, in registration order.
NamedTensors capture_state(const torch::nn::Module& module);

// Bytes of torch::pickle_save(dict name -> tensor); `torch.load(path)` in Python gives the dict.
std::vector<char> pickle_state(const NamedTensors& state);

}  // namespace ddpbench::modes
