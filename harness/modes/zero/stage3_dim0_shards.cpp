// stage3_dim0_shards.cpp — see stage3_dim0_shards.h.
#include "modes/zero/stage3_dim0_shards.h"

#include <torch/torch.h>

#include <string>

#include "scenarios/optim/clip_grad_norm.h"
#include "scenarios/optim/optimizer_state.h"

namespace ddpbench::modes::zero {

Stage3Dim0Shards::Stage3Dim0Shards(ZeroShared& shared, bool keeps_previous_forward,
                                   int64_t bucket_bytes)
    : ZeroStage(shared) {
  if (keeps_previous_forward) {
    for (const at::Tensor& p : shared_.params) previous_forward_.push_back(p.detach().clone());
  }
  // Cut into buckets while the parameters are whole: the buckets hold full gradients.
  schedule_ = std::make_unique<BucketSchedule>(
      shared_, bucket_bytes,
      [this](int64_t index) {
        // The grad and inf faults, on the gradient as backward left it (zeros where it left none).
        const GradientFaults& f = shared_.faults;
        if (index == f.grad_parameter || (index == 0 && f.overflow_first)) {
          f.apply(index, gradient_or_zeros(shared_.params[static_cast<size_t>(index)]));
        }
      },
      [this](size_t index) { launch(index); });
  pending_.resize(schedule_->size());
  ParameterUnits units = parameter_units(shared_.module, shared_.names);
  shards_ =
      std::make_unique<Dim0Shards>(shared_.params, shared_.mesh.shard(), std::move(units.unit_of));
  gathers_ = std::make_unique<UnitGathers>(*shards_, shared_.module, std::move(units.listener_unit),
                                           [this](int64_t unit) { gathered(unit); });
}

Stage3Dim0Shards::~Stage3Dim0Shards() = default;

int64_t Stage3Dim0Shards::buckets() const { return static_cast<int64_t>(schedule_->size()); }

void Stage3Dim0Shards::before_backward() { schedule_->arm(); }

void Stage3Dim0Shards::launch(size_t index) {
  std::vector<at::Tensor> full;
  for (const at::Tensor& p : shared_.params) full.push_back(p.grad());
  const std::vector<int64_t>& bucket = schedule_->buckets()[index];
  // Scaled before the sum (Note [HSDP's divide factors]).
  pending_[index] = shards_->start_reduce_scatter(bucket, full, shared_.divide);
  // The bucket's gradients are in the reduce-scatter's input now, and backward is done with its
  // parameters (every use's backward ran before their gradients were final): both are freed, as
  // FSDP2 reshards each module after its backward, so that a rank holds fewer full tensors as
  // backward goes on.
  for (const int64_t i : bucket) {
    at::Tensor& p = shared_.params[static_cast<size_t>(i)];
    shared_.used.mark(static_cast<size_t>(i), p.grad().defined());
    p.mutable_grad().reset();
  }
  shards_->release(bucket);
}

bool Stage3Dim0Shards::before_forward(bool stale) {
  if (shards_->gathered()) return false;  // a no_sync micro-step's: still whole
  std::vector<at::Tensor>& params = shared_.params;
  // The step loop's zero_grad left the shards' gradients None (torch 2) or zeroed in place
  // (libtorch 1.13, whose zeroed gradient still counts as one): the same, at full size, as each
  // unit is gathered.
  zeroed_.assign(params.size(), 0);
  for (size_t i = 0; i < params.size(); ++i) {
    zeroed_[i] = params[i].grad().defined() ? 1 : 0;
    params[i].mutable_grad().reset();
  }
  gathers_->begin(stale ? &previous_forward_ : nullptr);
  return true;
}

void Stage3Dim0Shards::gathered(int64_t unit) {
  std::vector<at::Tensor>& params = shared_.params;
  for (const int64_t index : shards_->unit_parameters(unit)) {
    const auto i = static_cast<size_t>(index);
    if (zeroed_[i] != 0) params[i].mutable_grad() = at::zeros_like(params[i]);
    if (!previous_forward_.empty()) previous_forward_[i] = params[i].detach().clone();
  }
}

void Stage3Dim0Shards::after_forward() { gathers_->finish(); }

void Stage3Dim0Shards::reduce() {
  std::vector<at::Tensor>& params = shared_.params;
  schedule_->finish_backward();  // launches what is left: every parameter is marked and freed
  const std::shared_ptr<comm::Work> used =
      shared_.used.start(shared_.comm, params.front().device());
  // Each bucket's chunks of the sum (under HSDP over the replicas too), copied out of the
  // reduce-scatter's input where they are a view of it.
  std::vector<comm::ScatterWork> scatters;
  for (Dim0Shards::PendingScatter& p : pending_) scatters.push_back(std::move(p.scatter));
  int64_t replica_bytes = 0;
  const std::vector<at::Tensor> blocks =
      finish_bucket_reductions(shared_.mesh, shared_.divide, shared_.hsdp_faults, scatters,
                               /*owned=*/true, replica_bytes);
  std::vector<at::Tensor> mine(params.size());
  for (size_t b = 0; b < pending_.size(); ++b) {
    const std::vector<at::Tensor> chunks = shards_->chunks(pending_[b], blocks[b]);
    for (size_t j = 0; j < chunks.size(); ++j) {
      mine[static_cast<size_t>(pending_[b].params[j])] = chunks[j];
    }
    pending_[b] = {};
  }
  used->wait();
  shared_.used.finish();
  schedule_->reset();
  // Every parameter's full value and gradient went at its bucket's launch; the shards remain.
  for (size_t i = 0; i < params.size(); ++i) {
    // No rank used it: None, as single-device's (and the optimizer skips it).
    if (shared_.used.anywhere(i)) params[i].mutable_grad() = mine[i];
  }
  shared_.bytes_per_step =
      shared_.mesh.shard().world_size() * shards_->shard_bytes() + replica_bytes;
}

void Stage3Dim0Shards::clip(double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor>& params = shared_.params;
  at::Tensor squares = at::zeros({static_cast<int64_t>(params.size())}, params.front().options());
  for (size_t i = 0; i < params.size(); ++i) {
    const at::Tensor& g = params[i].grad();
    if (g.defined()) squares[static_cast<int64_t>(i)].copy_(g.pow(2).sum());
  }
  comm::allreduce_sum_blocking(shared_.mesh.shard(), squares);
  const at::Tensor coefficient = scenarios::clip_coefficient(squares.sqrt().norm(2), max_norm);
  for (at::Tensor& p : params) {
    if (p.grad().defined()) p.mutable_grad().mul_(coefficient);
  }
}

std::vector<at::Tensor> Stage3Dim0Shards::recorded_gradients() {
  std::vector<at::Tensor> mine;
  for (const at::Tensor& p : shared_.params) mine.push_back(p.grad());
  std::vector<at::Tensor> grads = shards_->gather_full(mine);
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!shared_.used.anywhere(i)) grads[i] = at::Tensor();
  }
  return grads;
}

int64_t Stage3Dim0Shards::first_owned_parameter() const {
  for (size_t i = 0; i < shared_.params.size(); ++i) {
    if (shards_->holds_rows(static_cast<int64_t>(i))) return static_cast<int64_t>(i);
  }
  return -1;
}

void Stage3Dim0Shards::gather_state(torch::optim::Optimizer& optimizer) {
  if (shards_->gathered()) return;
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor>& params = shared_.params;
  stashed_gradients_.clear();
  for (at::Tensor& p : params) {
    stashed_gradients_.push_back(p.grad());
    p.mutable_grad().reset();
  }
  shards_->gather();
  // The optimizer's shard-shaped state entries, whole. Every rank steps a shard of every parameter
  // some rank has a gradient for, so an entry exists on all ranks or on none.
  std::vector<scenarios::ParameterState> states;
  for (const at::Tensor& p : params) states.push_back(scenarios::parameter_state(optimizer, p));
  for (const std::string& name : scenarios::state_names()) {
    if (!scenarios::shaped_like_parameter(name)) continue;
    std::vector<at::Tensor> entries;
    bool any = false;
    for (const scenarios::ParameterState& st : states) {
      const auto it = st.find(name);
      entries.push_back(it == st.end() ? at::Tensor() : it->second);
      any = any || it != st.end();
    }
    if (!any) continue;
    const std::vector<at::Tensor> whole = shards_->gather_full(entries);
    for (size_t i = 0; i < states.size(); ++i) {
      if (entries[i].defined()) states[i][name] = whole[i];
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    scenarios::set_parameter_state(optimizer, params[i], states[i]);
  }
}

void Stage3Dim0Shards::release_state(torch::optim::Optimizer& optimizer) {
  if (!shards_->gathered()) return;
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor>& params = shared_.params;
  for (size_t i = 0; i < params.size(); ++i) {
    scenarios::ParameterState st = scenarios::parameter_state(optimizer, params[i]);
    for (auto& [name, t] : st) {
      if (scenarios::shaped_like_parameter(name)) t = shards_->chunk_of(static_cast<int64_t>(i), t);
    }
    scenarios::set_parameter_state(optimizer, params[i], st);
  }
  shards_->recut();
  for (size_t i = 0; i < stashed_gradients_.size(); ++i) {
    params[i].mutable_grad() = stashed_gradients_[i];
  }
  stashed_gradients_.clear();
}

}  // namespace ddpbench::modes::zero
