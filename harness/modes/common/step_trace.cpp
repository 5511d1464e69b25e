// step_trace.cpp — see step_trace.h.
#include "modes/common/step_trace.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>

#include "modes/common/model_state.h"
#include "scenarios/optim/optimizer_state.h"

namespace ddpbench::modes {
namespace {

constexpr unsigned kNoHook = std::numeric_limits<unsigned>::max();

}  // namespace

StepTrace::~StepTrace() = default;

void StepTrace::add(TracePhase phase, std::string tensor, const at::Tensor& value,
                    bool whole_allowed) {
  TraceEntry e;
  e.step = step_;
  e.phase = phase;
  e.tensor = std::move(tensor);
  e.fingerprint = form_ == GradRecordKind::kFingerprint || !whole_allowed;
  e.value = e.fingerprint ? fingerprint(value) : host_copy(value);
  step_entries_.push_back(std::move(e));
}

void StepTrace::begin_step(int64_t step, torch::nn::Module& module) {
  step_ = step;
  micro_step_ = 0;
  step_entries_.clear();
  names_.clear();
  before_.clear();
  local_.clear();
  hooks_.clear();
  for (const auto& item : module.named_parameters()) {
    names_.push_back(item.key());
    before_.push_back(host_copy(item.value()));
  }
  if (!started_) {
    started_ = true;
    for (size_t i = 0; i < names_.size(); ++i) add(TracePhase::kStart, names_[i], before_[i], true);
    for (const auto& b : module.named_buffers()) add(TracePhase::kStart, b.key(), b.value(), true);
  }
  // The gradient each backward computes for a parameter, before it is accumulated into .grad
  // and before any reduction hook sees it: a tensor hook runs first.
  auto params = module.parameters();
  local_.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].requires_grad()) {
      hooks_.push_back(kNoHook);
      continue;
    }
    hooks_.push_back(params[i].register_hook([this, i](const at::Tensor& g) {
      local_[i] = local_[i].defined() ? local_[i] + g.detach() : g.detach().clone();
    }));
  }
  scenarios::models::attach_probe(module, this);
}

void StepTrace::seen(const std::string& name, const at::Tensor& output) {
  std::string tensor =
      micro_step_ > 0 ? "micro " + std::to_string(micro_step_) + ": " + name : name;
  add(TracePhase::kForward, std::move(tensor), output, output.numel() <= kFullOutputLimit);
  ++outputs_seen_;
}

void StepTrace::reduced(const std::vector<at::Tensor>& gradients) {
  for (size_t i = 0; i < gradients.size() && i < names_.size(); ++i) {
    if (gradients[i].defined()) add(TracePhase::kReducedGradient, names_[i], gradients[i], true);
  }
}

void StepTrace::detach(torch::nn::Module& module) {
  auto params = module.parameters();
  for (size_t i = 0; i < params.size() && i < hooks_.size(); ++i) {
    if (hooks_[i] != kNoHook) params[i].remove_hook(hooks_[i]);
  }
  hooks_.clear();
  scenarios::models::attach_probe(module, nullptr);
}

void StepTrace::end_step(double loss, torch::nn::Module& module,
                         torch::optim::Optimizer& optimizer) {
  detach(module);
  add(TracePhase::kLoss, "loss", at::scalar_tensor(loss, at::kDouble), true);
  for (size_t i = 0; i < local_.size(); ++i) {
    if (local_[i].defined()) add(TracePhase::kLocalGradient, names_[i], local_[i], true);
  }
  auto params = module.parameters();
  for (size_t i = 0; i < params.size() && i < before_.size(); ++i) {
    const at::Tensor after = host_copy(params[i]);
    add(TracePhase::kUpdate, names_[i], after - before_[i], true);
    add(TracePhase::kParameter, names_[i], after, true);
    for (const auto& [entry, t] : scenarios::parameter_state(optimizer, params[i])) {
      add(TracePhase::kOptimizerState, names_[i] + "[" + entry + "]", t, true);
    }
  }
  for (const auto& b : module.named_buffers()) add(TracePhase::kBuffer, b.key(), b.value(), true);
  // The computation's order: the phases in kTracePhases' order, each in the order it was made.
  std::stable_sort(step_entries_.begin(), step_entries_.end(),
                   [](const TraceEntry& a, const TraceEntry& b) { return a.phase < b.phase; });
  for (TraceEntry& e : step_entries_) entries_.push_back(std::move(e));
  step_entries_.clear();
  local_.clear();
}

}  // namespace ddpbench::modes
