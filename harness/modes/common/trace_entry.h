// trace_entry.h — one tensor of a --trace (modes/common/step_trace.h): what a step computed, named
// by where in the computation it was made. A trace is these entries in computation order, per
// mode; `ddpbench diff` (trace/trace_diff.h) walks two of them side by side.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstdint>
#include <string>

namespace ddpbench::modes {

// Where in a step a tensor is made, in the order the step makes them; one row each below, whose
// name the trace file and the diff use.
enum class TracePhase {
  kStart,            // the parameters and buffers the first traced step starts from
  kStepStart,        // a digest of the whole state (parameters, buffers, optimizer) a step starts
                     // from: lockstep loads another state than the last step left
  kForward,          // a module's forward output (built-in models; forward_probe.h)
  kLoss,             // the step's loss as this process computed it (DDP: the global mean)
  kLocalGradient,    // a parameter's gradient as one rank's backward left it (summed over the
                     // accumulation micro-steps), before the mode's reduction: what that rank
                     // gives the reduction, one entry per rank (TraceEntry::rank)
  kReducedGradient,  // after the reduction: what the optimizer applies (before clipping)
  kUpdate,           // the parameter after the optimizer step minus before it
  kParameter,        // the parameter after the optimizer step
  kOptimizerState,   // an entry of the optimizer's state after the step
  kBuffer,           // a buffer after the step (BatchNorm's running statistics)
};

struct TracePhaseRow {
  TracePhase phase;
  const char* name;
  const char* what;  // for the diff's text: "the gradient of X <what>"
};
inline constexpr std::array<TracePhaseRow, 10> kTracePhases = {{
    {TracePhase::kStart, "start", "the state the first step started from"},
    {TracePhase::kStepStart, "step_start", "state the step started from (its digest)"},
    {TracePhase::kForward, "forward", "forward output"},
    {TracePhase::kLoss, "loss", "loss"},
    {TracePhase::kLocalGradient, "grad_local", "gradient before the reduction"},
    {TracePhase::kReducedGradient, "grad_reduced", "gradient after the reduction"},
    {TracePhase::kUpdate, "update", "optimizer update"},
    {TracePhase::kParameter, "parameter", "parameter after the step"},
    {TracePhase::kOptimizerState, "optimizer_state", "optimizer state after the step"},
    {TracePhase::kBuffer, "buffer", "buffer after the step"},
}};
const char* trace_phase_name(TracePhase phase);
// Throws std::invalid_argument for a name no row has.
TracePhase trace_phase_named(const std::string& name);

struct TraceEntry {
  int64_t step = 0;  // run-global
  TracePhase phase = TracePhase::kLoss;
  // The rank (dp: the replica) whose tensor it is: a local gradient is every rank's; every other
  // phase is the tracing process's own (rank 0 of a per-rank mode), rank 0.
  int64_t rank = 0;
  std::string tensor;  // "layer1.0.conv2", "fc.weight", "fc.weight[momentum_buffer]", "loss"
  // The tensor itself (float64 for the loss), or its [4] float64 fingerprint (sum, L1, L2,
  // max |x|; gradient_record.h) where the trace keeps fingerprints.
  bool fingerprint = false;
  at::Tensor value;
};

}  // namespace ddpbench::modes
