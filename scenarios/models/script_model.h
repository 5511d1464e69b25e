// script_model.h — a TorchScript module (a file written by torch.jit.script(model).save, see
// reference/script_model.py) as a torch::nn::Module, so that every mode trains the user's model
// through the same code as a built-in one: parameters(), buffers(), to(), train(), clone() and
// forward(Tensor) -> Tensor.
//
// The jit submodule tree is mirrored as nn child modules that register the jit module's own tensors
// (the same TensorImpls, not copies), under the names Python's state_dict uses: an in-place change
// through either side (the optimizer's step, to(device or dtype), DP's parameter sharing, DDP's
// gradient hooks) is seen by the other, and checkpoints and reports name tensors as the user's
// Python code does.
//
// The graph executor's optimisation is off unless asked for: TorchScript then runs op by op and
// autograd records the same operations as Python eager (bit-identical training, measured on 1.13),
// where the optimising executor may fuse operations and change the bits. The setting is
// thread-local in libtorch, so forward sets it on the calling thread (DP replicas run on threads).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <string>
#include <vector>

namespace torch::jit {
struct Module;
}  // namespace torch::jit

namespace ddpbench::scenarios::models {

// What a loaded file holds, for the report and the refusals.
struct ScriptModelFacts {
  int64_t parameters = 0;         // tensors that require grad
  int64_t frozen_parameters = 0;  // parameters with requires_grad=False (not trained)
  int64_t batch_norm_layers = 0;  // submodules of a torch.nn BatchNorm class (by type name)
  // The random operations forward runs (aten::dropout, aten::bernoulli, ...), once each, in
  // graph order: a model that draws needs the same draws in every mode
  // (Note [Same random draws in every mode], modes/common/forward_draws.h).
  std::vector<std::string> random_ops;
  // Buffers that forward updates in place (a running mean of the input, a step counter), by their
  // state_dict names, BatchNorm's own left out (counted in batch_norm_layers): data parallelism
  // gives each rank its own update of them (Note [Buffers updated in forward],
  // training/exact_reference.h).
  std::vector<std::string> mutated_buffers;
  // Made by torch.jit.trace, not torch.jit.script: forward has no line of Python source (a traced
  // graph records none), and data-dependent branches were frozen to the example input's.
  bool traced = false;
};

// One line for the run header and the report: "scripted, 52 BatchNorm layer(s), random draws
// (aten::dropout), graph executor optimisation off".
std::string describe_script_model(const ScriptModelFacts& facts, bool optimize_graph);

class ScriptModelImpl : public torch::nn::Module {
 public:
  // `bytes`: the file's content. Throws InputError, one line naming `file` and the fix, when it
  // is not TorchScript (a state dict, a pickled module), was written by a newer PyTorch, has no
  // parameter that requires grad (frozen, optimize_for_inference), shares one tensor under two
  // names, or has a forward that is not one tensor in, one tensor out. `known`: the facts of an
  // earlier load of the same bytes, whose forward-graph analysis (random ops, traced) is taken
  // instead of done again: inlining forward costs about as much as the load itself (82 ms beside
  // 99 ms for mobilenet_v2), and every replica, rank and phase loads the file.
  ScriptModelImpl(std::shared_ptr<const std::string> bytes, std::string file,
                  bool optimize_graph = false, const ScriptModelFacts* known = nullptr);
  ~ScriptModelImpl() override;

  at::Tensor forward(const at::Tensor& input);

  // The jit module's `training` flags follow (dropout, BatchNorm).
  void train(bool on = true) override;

  // A fresh load of the same file with this module's tensors copied in (onto `device` if given):
  // what DataParallel's replicas are made of.
  std::shared_ptr<torch::nn::Module> clone(
      const c10::optional<at::Device>& device = c10::nullopt) const override;

  const ScriptModelFacts& facts() const { return facts_; }
  bool optimizes_graph() const { return optimize_graph_; }

 private:
  std::shared_ptr<const std::string> bytes_;
  std::string file_;
  bool optimize_graph_;
  std::shared_ptr<torch::jit::Module> script_;
  ScriptModelFacts facts_;
};
TORCH_MODULE(ScriptModel);

// The facts of `model` when it is a TorchScript file's model; null for a built-in one.
const ScriptModelFacts* script_model_facts(const torch::nn::Module& model);

}  // namespace ddpbench::scenarios::models
