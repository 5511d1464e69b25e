// forward_draws.h — the same random draws in every mode.
//
// Note [Same random draws in every mode]: a model whose forward draws random
// numbers (dropout in a TorchScript file's classifier, a transformer's attention dropout) draws
// them from the default generator of the forward's device. Single-device training draws one mask
// for the whole batch, DDP rank r one for its slice, DataParallel's replicas race for one CPU
// generator: left alone, no two modes would apply the same masks and every comparison would FAIL
// on arithmetic that is not data parallelism's. So every mode runs a training forward of rank
// chunk r at step s right after seeding that device's generator with a key of (s, r): the exact
// reference forwards chunk by chunk (modes/single/single_path.h) and draws what rank r and
// replica r draw, bit for bit. A model that draws nothing runs untouched. PyTorch's own DDP tests
// seed every rank the same way before comparing with a single process (torch.manual_seed per rank).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace torch::nn {
class AnyModule;
class Module;
}  // namespace torch::nn

namespace ddpbench::modes {

// The generator seed of rank chunk `chunk`'s forward at run-global step `step`.
uint64_t forward_draw_seed(int64_t step, int64_t chunk);

// The evaluation pass's key (training/evaluation.h): a model that draws is evaluated one sample at
// a time, sample i of the held-out set under forward_draw_seed(kEvaluationStep, i), so every mode,
// replica, rank and the single-device evaluation draw the same numbers for it however they batch
// and share the set.
inline constexpr int64_t kEvaluationStep = -1;

class ForwardDraws {
 public:
  // Seeds only when `model`'s forward draws random numbers (a TorchScript model's facts say so;
  // a built-in model has a Dropout module with p > 0).
  explicit ForwardDraws(const torch::nn::Module& model);

  // model.forward(input), after seeding input's device generator for (step, chunk) when the
  // model draws. Thread-safe: DataParallel's replicas call it from their threads, and one lock
  // keeps each seeding and the draws after it together (the CPU generator is one per process).
  at::Tensor forward(torch::nn::AnyModule& model, const at::Tensor& input, int64_t step,
                     int64_t chunk);
  // The same around any forward on `device` (DDP's, which broadcasts buffers first).
  at::Tensor forward(const std::function<at::Tensor()>& run, const at::Device& device, int64_t step,
                     int64_t chunk);
  // Whether the model draws (and so is seeded).
  bool seeds() const { return seeds_; }

 private:
  bool seeds_;
  std::unique_ptr<std::mutex> lock_;
};

}  // namespace ddpbench::modes
