// memory_format.h — MODEL.CHANNELS_LAST: a convolutional model trained in channels_last (NHWC)
// memory format, as `model.to(memory_format=torch.channels_last)` and
// `x.contiguous(memory_format=torch.channels_last)` set it up in PyTorch. The layout changes which
// kernels run and the order reductions sum in (on the CPU in float64 a conv's output moves by
// ~1e-15, BatchNorm's by more; float32 convolutions through oneDNN agree), so it is a setting to
// judge like any other: every mode builds its model and takes its inputs through these, and the
// oracle does the same in Python.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/MemoryFormat.h>

#include <cstdint>

namespace torch::nn {
class Module;
class AnyModule;
}  // namespace torch::nn

namespace ddpbench::scenarios {

struct ScenarioSpec;

// The format inputs of 4 dimensions take: ChannelsLast under MODEL.CHANNELS_LAST, else Contiguous.
c10::MemoryFormat input_memory_format(const ScenarioSpec& spec);
// `inputs` in `format` when it has 4 dimensions (an image batch), else as it is.
at::Tensor in_memory_format(const at::Tensor& inputs, c10::MemoryFormat format);
// Every 4-dimensional parameter and buffer of `module` in channels_last, as Module.to(
// memory_format=torch.channels_last) converts them; returns how many were converted.
int64_t to_channels_last(torch::nn::Module& module);
// A freshly initialised model of `spec` (spec.build_model(seed)) in the spec's memory format:
// what every mode, reference and evaluation trains or evaluates.
torch::nn::AnyModule fresh_model(const ScenarioSpec& spec, int64_t seed);

}  // namespace ddpbench::scenarios
