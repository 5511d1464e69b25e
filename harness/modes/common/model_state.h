// model_state.h — a model's parameters and buffers as an ordered name -> tensor list (the
// state_dict names), and its serialisation as a pickle that Python's torch.load reads as a dict.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

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

// torch::pickle_save's archive format, minus its TorchScript type tags: libtorch wraps every
// List and Dict in torch.jit._pickle.restore_type_tag, a global that torch.load's weights-only
// unpickler (the default since PyTorch 2.6) refuses, so a user's `torch.load(path)` failed on
// every file ddpbench wrote. Without the tags Python reads plain dicts and lists, in 1.13 and 2.x.
std::vector<char> pickle_for_torch_load(const c10::IValue& value);

// pickle_for_torch_load(dict name -> tensor); `torch.load(path)` in Python gives the dict.
std::vector<char> pickle_state(const NamedTensors& state);

}  // namespace ddpbench::modes
