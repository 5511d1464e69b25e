// distributed_model.cpp — see distributed_model.h.
#include "modes/ddp/distributed_model.h"

#include <torch/torch.h>

#include "modes/common/trained_parameters.h"
#include "modes/ddp/bucket_assignment.h"

namespace ddpbench::modes::ddp {

DistributedModel::DistributedModel(torch::nn::AnyModule module, comm::Communicator& comm,
                                   DdpOptions options)
    : module_(std::move(module)) {
  TrainedParameters trained = trained_parameters(*module_.ptr());
  names_ = std::move(trained.names);
  // run/resume.cpp refuses a layout that does not fit before any rank starts; this guards the
  // engines' bucket allocation whatever hands them one.
  if (!options.resume_buckets.empty()) {
    check_bucket_layout(options.resume_buckets, static_cast<int64_t>(trained.tensors.size()));
  }
  engine_ = make_ddp_engine(*module_.ptr(), names_, trained.tensors, comm, options);
}

DistributedModel::~DistributedModel() = default;

void DistributedModel::sync_buffers(std::vector<at::Tensor>& buffers) {
  torch::NoGradGuard no_grad;
  if (keep_own_buffers_) {
    std::vector<at::Tensor> lost;
    for (const auto& b : buffers) lost.push_back(b.clone());
    engine_->broadcast(lost, buffer_source_);  // every rank must join the collective
  } else {
    engine_->broadcast(buffers, buffer_source_);
  }
  // Device-side copies (no host synchronisation); digested only after checked steps.
  buffers_at_forward_.clear();
  if (record_buffers_) {
    for (const auto& b : buffers) buffers_at_forward_.push_back(b.detach().clone());
  }
}

at::Tensor DistributedModel::forward(const at::Tensor& input) {
  engine_->before_forward(sync_, [this](std::vector<at::Tensor>& b) { sync_buffers(b); });
  at::Tensor output = module_.forward(input);
  engine_->after_forward(output, sync_);
  return output;
}

at::Tensor DistributedModel::evaluation_forward(const at::Tensor& input, bool first) {
  engine_->before_evaluation_forward(first);
  at::Tensor output = module_.forward(input);
  engine_->after_evaluation_forward(output);
  return output;
}

void DistributedModel::reduce_gradients() { engine_->reduce(sync_); }

void DistributedModel::reduce_gradients_joined() { engine_->reduce_as_joined(sync_); }

void DistributedModel::sync_buffers_as_joined() {
  engine_->sync_buffers_as_joined(sync_, [this](std::vector<at::Tensor>& b) { sync_buffers(b); });
}

std::optional<int64_t> DistributedModel::allreduces_per_reduction() const {
  return engine_->allreduces_per_reduction();
}

void DistributedModel::skip_last_reduction(bool skip) { engine_->skip_last_reduction(skip); }

void DistributedModel::set_sync(bool sync) {
  sync_ = sync;
  engine_->set_sync(sync);
}

DistributedModel::NoSync::NoSync(DistributedModel& m) : model_(m) { model_.set_sync(false); }

DistributedModel::NoSync::~NoSync() { model_.set_sync(true); }

void DistributedModel::set_gradient_tap(GradientTap tap) {
  engine_->set_gradient_tap(std::move(tap));
}

int64_t DistributedModel::num_buckets() const { return engine_->num_buckets(); }

void DistributedModel::settle_buckets() { engine_->settle_buckets(); }

std::vector<std::vector<int64_t>> DistributedModel::bucket_layout() const {
  return engine_->bucket_layout();
}

int64_t DistributedModel::bytes_last_step() const { return engine_->bytes_last_step(); }

}  // namespace ddpbench::modes::ddp
