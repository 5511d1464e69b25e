// memory_format.cpp — see memory_format.h.
#include "scenarios/memory_format.h"

#include <torch/nn/module.h>
#include <torch/nn/modules/container/any.h>

#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

c10::MemoryFormat input_memory_format(const ScenarioSpec& spec) {
  return spec.channels_last ? c10::MemoryFormat::ChannelsLast : c10::MemoryFormat::Contiguous;
}

at::Tensor in_memory_format(const at::Tensor& inputs, c10::MemoryFormat format) {
  if (format == c10::MemoryFormat::Contiguous || inputs.dim() != 4) return inputs;
  return inputs.contiguous(format);
}

int64_t to_channels_last(torch::nn::Module& module) {
  int64_t converted = 0;
  const auto convert = [&converted](const at::Tensor& t) {
    if (t.dim() != 4) return;
    // set_data keeps the tensor (and its autograd identity); only its layout changes.
    at::Tensor(t).set_data(t.contiguous(c10::MemoryFormat::ChannelsLast));
    ++converted;
  };
  for (const at::Tensor& p : module.parameters()) convert(p);
  for (const at::Tensor& b : module.buffers()) convert(b);
  return converted;
}

torch::nn::AnyModule fresh_model(const ScenarioSpec& spec, int64_t seed) {
  torch::nn::AnyModule model = spec.build_model(seed);
  if (spec.channels_last) to_channels_last(*model.ptr());
  return model;
}

}  // namespace ddpbench::scenarios
