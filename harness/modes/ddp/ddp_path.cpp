// ddp_path.cpp — see ddp_path.h.
#include "modes/ddp/ddp_path.h"

#include <fmt/format.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "comm/broadcast_coalesced.h"
#include "errors.h"
#include "modes/sync_bn/sync_batch_norm.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes::ddp {
namespace {

int64_t resolve_fault_tensor(const std::optional<FaultSpec>& fault,
                             const std::vector<std::string>& names) {
  if (!fault || fault->kind != FaultKind::kGrad) return -1;
  if (fault->tensor.empty()) return 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == fault->tensor) return static_cast<int64_t>(i);
  }
  // run_setup refused an unknown tensor before any rank started (exit 2, naming the model's
  // parameters): reaching this is a bug, not bad input.
  throw std::logic_error(
      fmt::format("--inject-fault tensor '{}' passed run_setup's check but "
                  "the DDP model has no such parameter",
                  fault->tensor));
}

// Where the communicator's two counts stood: the backend's (collectives_issued, which c10d's
// Reducer moves too) and the recording communicator's own (what it passed to the backend).
struct CollectiveMark {
  int64_t issued = 0;
  int64_t recorded = 0;
};

CollectiveMark collective_mark(const comm::Communicator& comm) {
  CollectiveMark m;
  m.issued = comm.collectives_issued();
  for (const int64_t c : comm.collective_counts().count) m.recorded += c;
  return m;
}

// What was issued on the backend since `before` past the recording communicator: what the
// backend's count moved by and the recording communicator's did not.
int64_t issued_past_since(const comm::Communicator& comm, const CollectiveMark& before) {
  const CollectiveMark now = collective_mark(comm);
  return (now.issued - before.issued) - (now.recorded - before.recorded);
}

}  // namespace

DdpPath::DdpPath(const scenarios::ScenarioSpec& spec, scenarios::ScenarioInstance& instance,
                 comm::Communicator& comm, const runtime::ExecutionContext& context,
                 DdpPathOptions options)
    : spec_(spec),
      comm_(comm),
      options_(std::move(options)),
      sync_bn_control_(std::make_shared<sync_bn::SyncBnControl>()) {
  context.place_model(*instance.model.ptr());
  if (options_.sync_bn) {
    sync_bn::convert_sync_batchnorm(*instance.model.ptr(), comm_, sync_bn_control_);
  }
  modes::ddp::DdpOptions model_options = options_.ddp;
  model_options.bucket_fault = options_.fault && options_.fault->kind == FaultKind::kBucket;
  model_ = std::make_unique<DistributedModel>(instance.model, comm_, model_options);
  draws_ = std::make_unique<ForwardDraws>(model_->module());
  model_->set_record_buffers(options_.checking && checks_buffers());

  const int64_t fault_tensor = resolve_fault_tensor(options_.fault, model_->reduced_names());
  if (fault_on_rank(options_.fault, FaultKind::kInf, comm_.rank())) {
    // An overflow in this rank's first gradient, before the reduction spreads it.
    const int64_t fault_step = options_.fault->step;
    model_->set_gradient_tap([this, fault_step](int64_t index, at::Tensor& slot) {
      if (index == 0 && current_step_ == fault_step && slot.numel() > 0) {
        slot.view(-1)[0].fill_(std::numeric_limits<double>::infinity());
      }
    });
  }
  if (options_.fault && options_.fault->kind == FaultKind::kTied) {
    // Every rank counts the tied tensor's gradient once per use: twice the sum in its slot.
    const std::vector<std::string>& names = model_->reduced_names();
    const auto tied = std::find(names.begin(), names.end(), spec_.tied_parameters.front());
    if (tied == names.end())
      throw std::logic_error("tied fault: the tied parameter is not reduced");
    const int64_t tied_index = tied - names.begin();
    const int64_t fault_step = options_.fault->step;
    model_->set_gradient_tap([this, tied_index, fault_step](int64_t index, at::Tensor& slot) {
      if (index == tied_index && current_step_ == fault_step) slot.mul_(2);
    });
  }
  if (fault_tensor >= 0 && options_.fault->rank == comm_.rank()) {
    const double scale = 1.0 + options_.fault->eps;
    const int64_t fault_step = options_.fault->step;
    model_->set_gradient_tap(
        [this, fault_tensor, scale, fault_step](int64_t index, at::Tensor& slot) {
          if (index == fault_tensor && current_step_ == fault_step) slot.mul_(scale);
        });
  }
}

DdpPath::~DdpPath() = default;

std::string DdpPath::who() const { return fmt::format("rank {}", comm_.rank()); }

bool DdpPath::checks_buffers() const {
  return options_.ddp.broadcast_buffers && !model_->module().buffers().empty();
}

int64_t DdpPath::num_buckets() const { return model_->num_buckets(); }

std::vector<std::vector<int64_t>> DdpPath::step_shards(const data::EpochPlan& epoch,
                                                       int64_t step_in_epoch) const {
  join_ = JoinStep(epoch, step_in_epoch, options_.in_join);
  std::vector<int64_t> mine = epoch.local_batch(step_in_epoch, comm_.rank());
  if (mine.empty()) return {};  // out of batches: this rank has joined (forward_loss)
  return {std::move(mine)};
}

void DdpPath::end_step(bool last_step) {
  // A run that ends inside an epoch leaves its `with Join(...)` block there too.
  synced_ = join_.syncs(last_step);
  if (synced_) sync_as_join_ends();
}

void DdpPath::sync_as_join_ends() {
  // Join's post-hook (Note [PyTorch's Join, as it runs]): the last rank to join holds the state
  // every rank continues from.
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> state = model_->module().parameters();
  for (const at::Tensor& b : model_->module().buffers()) state.push_back(b);
  comm::broadcast_coalesced(comm_, state, join_.last_joiner);
}

at::Tensor DdpPath::forward_loss(const std::vector<data::Batch>& shards, int64_t step) {
  current_step_ = step;
  const int rank = comm_.rank();
  const std::optional<FaultSpec>& fault = options_.fault;
  if (fault_fires(fault, FaultKind::kCrash, rank, step)) {
    throw WorkerFailure(fmt::format("rank {}: injected crash at step {}", rank, step));
  }
  // syncbn fault: from its step on, this rank normalises with local statistics only.
  sync_bn_control_->skip_exchange = fault_active(fault, FaultKind::kSyncBn, rank, step);
  model_->set_keep_own_buffers(fault_active(fault, FaultKind::kBuffers, rank, step));
  model_->skip_last_reduction(fault_fires_everywhere(fault, FaultKind::kBucket, step));
  model_->set_buffer_source(join_.buffer_source());
  if (fault_fires(fault, FaultKind::kHang, rank, step)) {
    // Stop responding without exiting: only the launcher's timeout can end this.
    for (;;) pause();
  }
  // join fault: a joined rank that trains on its last batch again and contributes that gradient
  // instead of zeros.
  const data::Batch* taken = batch_.take(shards, fault_fires(fault, FaultKind::kJoin, rank, step));
  // c10d's Reducer broadcasts its bucket order when it rebuilds its buckets, in the forward, on
  // the backend's process group: counted as broadcasts (their bytes unknown here).
  const CollectiveMark before = collective_mark(comm_);
  const auto count_rebuild = [&] {
    if (!model_->drives_backend_directly()) return;
    const int64_t past = issued_past_since(comm_, before);
    if (past > 0) comm_.count_issued_past(comm::FlightOp::kBroadcast, past, 0);
  };
  if (taken == nullptr) {
    // No forward: the buffers the others start from, received, and a zero loss for the step
    // loop's bookkeeping (0 samples, so it weighs nothing).
    model_->sync_buffers_as_joined();
    count_rebuild();
    return at::zeros({}, model_->module().parameters().front().options());
  }
  const data::Batch& batch = *taken;
  const at::Tensor output = draws_->forward([&] { return model_->forward(batch.inputs); },
                                            batch.inputs.device(), step, rank);
  count_rebuild();
  at::Tensor loss = scenarios::compute_loss(spec_, output, batch.targets);
  if (fault_fires(fault, FaultKind::kNan, rank, step)) {
    loss = loss * std::numeric_limits<double>::quiet_NaN();
  }
  return loss;
}

void DdpPath::backward(const at::Tensor& loss) {
  if (counted_step_ != current_step_) {  // the step's first micro-step
    counted_step_ = current_step_;
    gradient_collectives_ = 0;
  }
  const CollectiveMark before = collective_mark(comm_);
  if (!batch_.joined()) loss.backward();
  gradient_collectives_ += comm_.collectives_issued() - before.issued;
  if (model_->drives_backend_directly()) {  // counted at the reduction's end
    issued_past_ += issued_past_since(comm_, before);
  }
}

void DdpPath::reduce_gradients() {
  const CollectiveMark before = collective_mark(comm_);
  if (batch_.joined()) {
    model_->reduce_gradients_joined();
  } else {
    model_->reduce_gradients();
  }
  gradient_collectives_ += comm_.collectives_issued() - before.issued;
  if (model_->drives_backend_directly()) {
    // c10d's Reducer allreduces on the backend's process group, past the recording
    // communicator; the backend's own count (collectives_issued) holds them, so they are what it
    // counted and the recording communicator did not. They are all-reduces (the buckets and the
    // used-parameter map), with the buckets' bytes.
    issued_past_ += issued_past_since(comm_, before);
    if (issued_past_ > 0) {
      comm_.count_issued_past(comm::FlightOp::kAllreduce, issued_past_, model_->bytes_last_step());
    }
    issued_past_ = 0;
  }
  // The buckets this reduction used (a joined rank's rebuild is behind it): what it had to issue.
  if (model_->sync()) {
    if (const std::optional<int64_t> required = model_->allreduces_per_reduction()) {
      required_allreduces_[current_step_] += *required;
    }
  }
}

at::Tensor DdpPath::eval_forward(const at::Tensor& inputs) {
  torch::NoGradGuard no_grad;
  torch::nn::Module& m = model_->module();
  m.eval();
  at::Tensor out = model_->evaluation_forward(inputs, !evaluated_);
  evaluated_ = true;
  m.train();
  return out;
}

double DdpPath::finish_checked_step(int64_t step, double local_loss, int64_t samples) {
  const double loss = ranks::global_mean_loss(comm_, local_loss, samples);

  // Parameters must agree bit for bit across ranks after every step: DDP's whole promise. With
  // broadcast_buffers, so must the buffers every forward started from. One allgather for both.
  std::vector<std::string> names;
  at::Tensor digests = ranks::state_digests(model_->module(), &names);
  const auto num_params = static_cast<int64_t>(names.size());
  if (checks_buffers()) {
    const auto buffer_names = module().named_buffers().keys();
    names.insert(names.end(), buffer_names.begin(), buffer_names.end());
    std::vector<int64_t> buffer_digests;
    for (const auto& b : model_->buffers_at_last_forward()) {
      buffer_digests.push_back(static_cast<int64_t>(ranks::digest_bytes(b)));
    }
    digests = at::cat({digests, at::tensor(buffer_digests, at::kLong)});
  }
  const std::vector<at::Tensor> all = comm_.allgather(digests);
  // A joined rank holds what its last step left until Join's final sync (Note [PyTorch's Join,
  // as it runs]): the ranks still training are compared with the lowest of them.
  int first = 0;
  while (first + 1 < comm_.world_size() && !join_.in_step(first, synced_)) ++first;
  for (int r = first + 1; r < comm_.world_size(); ++r) {
    if (!join_.in_step(r, synced_)) continue;
    const at::Tensor differs = all[static_cast<size_t>(r)].ne(all[static_cast<size_t>(first)]);
    const at::Tensor params = differs.narrow(0, 0, num_params);
    const at::Tensor buffers = differs.narrow(0, num_params, differs.size(0) - num_params);
    if (disagreement_.step < 0 && params.any().item<bool>()) {
      disagreement_ = {step, r, names[static_cast<size_t>(params.nonzero()[0][0].item<int64_t>())]};
    }
    if (buffer_disagreement_.step < 0 && buffers.any().item<bool>()) {
      const int64_t idx = num_params + buffers.nonzero()[0][0].item<int64_t>();
      buffer_disagreement_ = {step, r, names[static_cast<size_t>(idx)]};
    }
  }
  return loss;
}

void DdpPath::check_loss_scale(int64_t step, double scale) {
  // Each rank's GradScaler is its own (DDP shares no scaler state): equal scales follow only from
  // equal found_inf decisions on the allreduced gradients, which is what this checks.
  const std::vector<at::Tensor> all = comm_.allgather(at::tensor({scale}, at::kDouble));
  const double rank0 = all[0].item<double>();
  for (int r = 1; r < comm_.world_size() && scale_disagreement_.step < 0; ++r) {
    const double theirs = all[static_cast<size_t>(r)].item<double>();
    if (theirs != rank0) scale_disagreement_ = {step, r, theirs, rank0};
  }
}

}  // namespace ddpbench::modes::ddp
