// forward_probe.h — how a trace (--trace, modes/common/step_trace.h) sees each module's forward
// output in the built-in models. libtorch's C++ modules have no forward hooks, so each built-in
// model names its outputs where its forward computes them (`seen("conv1", conv1(x))`), which costs
// a null check when no probe is attached. A clone (dp's replicas) starts unprobed, so two threads
// never report into one probe. TorchScript models are not probed: their forward is one graph
// whose intermediate values libtorch does not hand out, so their traces hold the loss and the
// per-parameter tensors only (the trace file says so).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace torch::nn {
class Module;
}

namespace ddpbench::scenarios::models {

class UnitListener;  // shard_units.h

class ForwardProbe {
 public:
  virtual ~ForwardProbe() = default;
  // `name`: the output's module path in state_dict style ("layer1.0.conv2"); functional steps
  // are named after what they compute ("layer1.0.relu", "maxpool").
  virtual void seen(const std::string& name, const at::Tensor& output) = 0;
};

// A built-in model (or a block of one) whose forward reports its outputs.
class ProbedModule {
 public:
  ProbedModule() = default;
  ProbedModule(const ProbedModule& /*other*/) {}
  ProbedModule& operator=(const ProbedModule& /*other*/) { return *this; }
  virtual ~ProbedModule() = default;

  void set_probe(ForwardProbe* probe, std::string path) {
    probe_ = probe;
    path_ = std::move(path);
  }
  // Whether this module is a sharding unit (shard_units.h): its forward starts with entering().
  virtual bool is_shard_unit() const { return false; }
  void set_unit_listener(UnitListener* listener, int64_t unit) {
    listener_ = listener;
    unit_ = unit;
  }

 protected:
  // `x`, reported as the output `name` of this module (its path prepended) when probed.
  at::Tensor seen(const char* name, at::Tensor x) const {
    if (probe_ != nullptr) probe_->seen(path_.empty() ? name : path_ + "." + name, x);
    return x;
  }
  // At the top of a sharding unit's forward: tells the listener, if any, that it is about to
  // compute (zero stage 3 waits there for its parameters' all-gather). Defined in
  // shard_units.cpp.
  void entering() const;

 private:
  ForwardProbe* probe_ = nullptr;
  std::string path_;
  UnitListener* listener_ = nullptr;
  int64_t unit_ = -1;
};

// Attaches `probe` to every ProbedModule in `root`'s tree under its module path (null detaches);
// the number of modules probed (0: the model reports no forward output).
int64_t attach_probe(torch::nn::Module& root, ForwardProbe* probe);

}  // namespace ddpbench::scenarios::models
