// step_trace.h — what --trace records of a mode's checked steps, for `ddpbench diff`: per step, in
// the order the step computes them, a digest of the state it starts from, each probed module's
// forward output, the loss, each parameter's gradient before the reduction as every rank gave
// it (from a hook on the parameter, summed over the accumulation micro-steps, gathered from the
// ranks by GradientPath::every_rank_gradients: what lets diff measure the reduction's rounding,
// Note [A reduction judged by its own contributions] in trace/reduction_check.h) and after it,
// the optimizer update and the parameter it made, the optimizer state and the buffers; before the
// first step, the state it starts from. The step loop (step_loop.h) drives it; it only reads,
// never changes what the step computes.
//
// Full tensors or fingerprints: the per-parameter tensors follow the run's gradient record
// (--grad-check; "auto" keeps full tensors up to kFullGradientLimit parameter elements, then the
// [4] fingerprints), and a forward output is kept whole only under a full record and up to
// kFullOutputLimit elements, else as its fingerprint.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "modes/common/gradient_record.h"
#include "modes/common/trace_entry.h"
#include "scenarios/models/forward_probe.h"

namespace torch::nn {
class Module;
}
namespace torch::optim {
class Optimizer;
}

namespace ddpbench::modes {

inline constexpr int64_t kFullOutputLimit = 1 << 20;

class StepTrace : public scenarios::models::ForwardProbe {
 public:
  explicit StepTrace(GradRecordKind form) : form_(form) {}
  ~StepTrace() override;
  StepTrace(const StepTrace&) = delete;
  StepTrace& operator=(const StepTrace&) = delete;

  // Before the step's forward (after lockstep loaded its start): the digest of the state it
  // starts from, the parameters the update is measured from, the gradient hooks, the forward
  // probe; the first step also records its start whole.
  void begin_step(int64_t step, torch::nn::Module& module, torch::optim::Optimizer& optimizer);
  // Accumulation: the forward outputs of micro-step m > 0 are named "micro m: <name>".
  void begin_micro_step(int64_t micro_step) { micro_step_ = micro_step; }
  void seen(const std::string& name, const at::Tensor& output) override;
  // After the reduction: the gradients the optimizer will apply
  // (GradientPath::gradients_to_record), and the GradScaler's scale the backward used (1 without
  // one): the local gradients are recorded unscaled, in the units of the reduced ones.
  void reduced(const std::vector<at::Tensor>& gradients, double loss_scale);
  // This process's local gradients of the step as they are recorded, one per parameter in
  // registration order (undefined for a parameter without a hook: one that does not train);
  // zeros where backward gave a trained parameter none (DDP reduces zeros for it). Every rank's
  // list has the same shapes, so the ranks can gather them.
  std::vector<at::Tensor> local_gradients() const;
  // Every rank's local_gradients(), in rank order (GradientPath::every_rank_gradients): what
  // end_step records as the step's local gradients; none where the mode cannot tell them (dp's
  // replicas).
  void set_every_rank(std::vector<std::vector<at::Tensor>> by_rank) {
    every_rank_ = std::move(by_rank);
  }
  // After the optimizer step, the state observed whole: the loss, the update, the optimizer
  // state, the buffers; the hooks and the probe come off.
  void end_step(double loss, torch::nn::Module& module, torch::optim::Optimizer& optimizer);

  // Whether any probed module reported a forward output (false: a TorchScript model, a plain
  // torch::nn module).
  bool saw_forward() const { return outputs_seen_ > 0; }
  std::vector<TraceEntry> take() { return std::move(entries_); }

 private:
  void add(TracePhase phase, std::string tensor, const at::Tensor& value, bool whole_allowed);
  void add_start_digest(torch::nn::Module& module, torch::optim::Optimizer& optimizer);
  void detach(torch::nn::Module& module);

  GradRecordKind form_;
  int64_t step_ = 0;
  bool started_ = false;
  int64_t micro_step_ = 0;
  int64_t outputs_seen_ = 0;
  std::vector<std::string> names_;
  std::vector<at::Tensor> before_;  // the parameters at the step's start (host copies)
  std::vector<at::Tensor> local_;   // summed hook gradients, per parameter
  double loss_scale_ = 1.0;
  std::vector<std::vector<at::Tensor>> every_rank_;
  std::vector<unsigned> hooks_;           // one per parameter
  std::vector<TraceEntry> step_entries_;  // this step's, before they are put in phase order
  std::vector<TraceEntry> entries_;
};

}  // namespace ddpbench::modes
