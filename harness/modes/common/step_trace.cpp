// step_trace.cpp — see step_trace.h.
#include "modes/common/step_trace.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "modes/common/model_state.h"
#include "scenarios/content_hash.h"
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

void StepTrace::begin_step(int64_t step, torch::nn::Module& module,
                           torch::optim::Optimizer& optimizer) {
  step_ = step;
  micro_step_ = 0;
  step_entries_.clear();
  names_.clear();
  before_.clear();
  local_.clear();
  hooks_.clear();
  every_rank_.clear();
  loss_scale_ = 1.0;
  for (const auto& item : module.named_parameters()) {
    names_.push_back(item.key());
    before_.push_back(host_copy(item.value()));
  }
  add_start_digest(module, optimizer);
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

void StepTrace::add_start_digest(torch::nn::Module& module, torch::optim::Optimizer& optimizer) {
  // Every byte the step starts from, in a fixed order: diff tells from it whether a step's
  // differences are its own or follow from where it started (lockstep starts each step from the
  // reference's state, not from what the last step left).
  std::string bytes;
  const auto append = [&bytes](const std::string& name, const at::Tensor& t) {
    const at::Tensor c = host_copy(t).contiguous();
    bytes +=
        fmt::format("{} {} {}\n", name, c10::toString(c.scalar_type()), fmt::join(c.sizes(), "x"));
    bytes.append(static_cast<const char*>(c.data_ptr()), c.nbytes());
  };
  auto params = module.parameters();
  for (size_t i = 0; i < names_.size(); ++i) {
    append(names_[i], before_[i]);
    for (const auto& [entry, t] : scenarios::parameter_state(optimizer, params[i])) {
      append(names_[i] + "[" + entry + "]", t);
    }
  }
  for (const auto& b : module.named_buffers()) append(b.key(), b.value());
  const std::string hex = scenarios::sha256_hex(bytes);
  at::Tensor digest = at::empty({static_cast<int64_t>(hex.size())}, at::kByte);
  std::memcpy(digest.data_ptr(), hex.data(), hex.size());
  TraceEntry e;
  e.step = step_;
  e.phase = TracePhase::kStepStart;
  e.tensor = "state";
  e.value = digest;
  step_entries_.push_back(std::move(e));
}

void StepTrace::reduced(const std::vector<at::Tensor>& gradients, double loss_scale) {
  loss_scale_ = loss_scale > 0 ? loss_scale : 1.0;
  for (size_t i = 0; i < gradients.size() && i < names_.size(); ++i) {
    if (gradients[i].defined()) add(TracePhase::kReducedGradient, names_[i], gradients[i], true);
  }
}

std::vector<at::Tensor> StepTrace::local_gradients() const {
  std::vector<at::Tensor> out(local_.size());
  for (size_t i = 0; i < local_.size() && i < hooks_.size(); ++i) {
    if (hooks_[i] == kNoHook) continue;
    // Unscaled by the GradScaler's power of two (exact), as the reduced gradients are recorded.
    const at::Tensor g = local_[i].defined() ? local_[i] / loss_scale_ : at::zeros_like(before_[i]);
    out[i] = host_copy(form_ == GradRecordKind::kFingerprint ? fingerprint(g) : g);
  }
  return out;
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
  for (size_t r = 0; r < every_rank_.size(); ++r) {
    for (size_t i = 0; i < every_rank_[r].size() && i < names_.size(); ++i) {
      if (!every_rank_[r][i].defined()) continue;
      TraceEntry e;
      e.step = step_;
      e.phase = TracePhase::kLocalGradient;
      e.rank = static_cast<int64_t>(r);
      e.tensor = names_[i];
      e.fingerprint = form_ == GradRecordKind::kFingerprint;
      e.value = every_rank_[r][i];
      step_entries_.push_back(std::move(e));
    }
  }
  every_rank_.clear();
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
