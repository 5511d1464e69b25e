// data_parallel_path.cpp — see data_parallel_path.h.
#include "modes/data_parallel/data_parallel_path.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "modes/common/forward_draws.h"
#include "runtime/replica_stream.h"
#include "runtime/worker_pool.h"
#include "scenarios/optim/autocast_scope.h"
#include "scenarios/optim/torch_version_compat.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes::data_parallel {
namespace {

// replicate(): parameters and buffers copied from the master, gradients cleared. A replica on the
// master's device shares the master's parameter storage instead (share_master_parameters), as
// replica 0 of PyTorch's replicate() does: nothing to copy.
void copy_master_into(torch::nn::Module& master, torch::nn::Module& replica, bool shares_params) {
  torch::NoGradGuard no_grad;
  auto mp = master.parameters();
  auto rp = replica.parameters();
  for (size_t i = 0; i < mp.size(); ++i) {
    if (!shares_params) rp[i].copy_(mp[i]);
    rp[i].mutable_grad() = at::Tensor();
  }
  auto mb = master.buffers();
  auto rb = replica.buffers();
  for (size_t i = 0; i < mb.size(); ++i) rb[i].copy_(mb[i]);
}

// The replica's parameters become separate autograd leaves over the master's storage: forward
// reads the weights the optimizer updates in place, and backward still produces the replica's
// own gradients for the reduce-add. Buffers stay the replica's: forward writes them.
void share_master_parameters(torch::nn::Module& master, torch::nn::Module& replica) {
  torch::NoGradGuard no_grad;
  auto mp = master.parameters();
  auto rp = replica.parameters();
  for (size_t i = 0; i < mp.size(); ++i) rp[i].set_data(mp[i]);
}

class DataParallelPath : public GradientPath {
 public:
  DataParallelPath(const scenarios::ScenarioSpec& spec, scenarios::ScenarioInstance& instance,
                   int64_t replicas, const runtime::ExecutionContext& context,
                   std::optional<FaultSpec> fault)
      : spec_(spec),
        master_(instance.model),
        master_device_(context.device()),
        k_(replicas),
        pool_(replicas),
        fault_(std::move(fault)),
        direct_(k_ == 1 && context.replica_device(0) == context.device()),
        draws_(*master_.ptr()) {
    context.place_model(*master_.ptr(), master_device_);
    for (int64_t r = 0; r < k_ && !direct_; ++r) {
      replicas_.push_back(master_.clone());
      replica_devices_.push_back(context.replica_device(r));
      context.place_model(*replicas_.back().ptr(), replica_devices_.back());
      shares_params_.push_back(replica_devices_.back() == master_device_);
      if (shares_params_.back()) share_master_parameters(*master_.ptr(), *replicas_.back().ptr());
      replicas_.back().ptr()->train();
      replica_params_.push_back(replicas_.back().ptr()->parameters());
    }
  }

  torch::nn::Module& module() override { return *master_.ptr(); }
  std::string who() const override { return "dp"; }

  // scatter() sends chunk r to replica r's device.
  at::Device shard_device(int64_t shard, const runtime::ExecutionContext& context) const override {
    return context.replica_device(shard);
  }

  // scatter(): chunk r of the global batch is rank r's slice of the plan (uneven as the plan
  // splits it: 7,7,6), loaded by the step loop as shard r. A rank with no samples left on an
  // epoch's last steps has no chunk: like scatter() of a small batch, fewer chunks than replicas,
  // and only the first replicas run.
  std::vector<std::vector<int64_t>> step_shards(const data::EpochPlan& epoch,
                                                int64_t step_in_epoch) const override {
    std::vector<std::vector<int64_t>> shards;
    for (int64_t r = 0; r < k_; ++r) {
      std::vector<int64_t> slice = epoch.local_batch(step_in_epoch, r);
      if (!slice.empty()) shards.push_back(std::move(slice));
    }
    return shards;
  }

  at::Tensor forward_loss(const std::vector<data::Batch>& shards, int64_t step) override {
    step_ = step;
    used_ = static_cast<int64_t>(shards.size());
    if (direct_) {
      // torch.nn.DataParallel.forward with one device: `return self.module(*inputs[0])` after
      // the scatter; no replicate, no parallel_apply, no gather.
      const at::Tensor output = draws_.forward(master_, shards.at(0).inputs, step, 0);
      return scenarios::compute_loss(spec_, output, shards[0].targets);
    }
    std::vector<at::Tensor> outputs(shards.size());
    // Autocast is a per-thread setting: parallel_apply enters the caller's autocast state in
    // every replica's thread, so each replica casts its own weights and rounds its own gradients.
    const c10::DeviceType type = master_device_.type();
    const bool autocast = scenarios::compat::autocast_enabled(type);
    const at::ScalarType autocast_dtype = scenarios::compat::autocast_dtype(type);
    pool_.run([&](int64_t r) {
      if (r >= used_) return;  // no chunk for this replica this step
      const auto i = static_cast<size_t>(r);
      torch::nn::AnyModule& replica = replicas_[i];
      // On CUDA each replica runs on a stream of its own (DataParallel's parallel_apply);
      // nothing on the CPU.
      const runtime::ReplicaStream stream(replica_devices_[i], master_device_);
      std::optional<scenarios::AutocastScope> autocast_scope;
      if (autocast) autocast_scope.emplace(replica_devices_[i].type(), autocast_dtype);
      copy_master_into(*master_.ptr(), *replica.ptr(), shares_params_[i]);
      outputs[i] = draws_.forward(replica, shards[i].inputs, step, r);
      stream.join();
    });
    // gather() onto the master's device in replica order, then the loss on the whole output.
    std::vector<at::Tensor> targets;
    for (size_t i = 0; i < shards.size(); ++i) {
      outputs[i] = outputs[i].to(master_device_);
      targets.push_back(shards[i].targets.to(master_device_));
    }
    return scenarios::compute_loss(spec_, at::cat(outputs), at::cat(targets));
  }

  void backward(const at::Tensor& loss) override { loss.backward(); }

  // DataParallel's forward of an evaluation batch: replicate the master (eval mode, so BatchNorm
  // uses the master's running statistics), scatter the batch in chunks of ceil(B / K) as
  // torch.chunk does (a small last batch reaches fewer replicas), run the replicas in parallel,
  // gather in replica order onto the master's device.
  at::Tensor eval_forward(const at::Tensor& inputs) override {
    torch::NoGradGuard no_grad;
    if (direct_) {
      master_.ptr()->eval();
      const at::Tensor output = master_.forward(inputs.to(master_device_));
      master_.ptr()->train();
      return output;
    }
    const std::vector<at::Tensor> chunks = inputs.chunk(k_);
    std::vector<at::Tensor> outputs(chunks.size());
    master_.ptr()->eval();
    pool_.run([&](int64_t r) {
      const auto i = static_cast<size_t>(r);
      if (i >= chunks.size()) return;
      torch::nn::AnyModule& replica = replicas_[i];
      const runtime::ReplicaStream stream(replica_devices_[i], master_device_);
      copy_master_into(*master_.ptr(), *replica.ptr(), shares_params_[i]);
      replica.ptr()->eval();
      outputs[i] = replica.forward(chunks[i].to(replica_devices_[i]));
      replica.ptr()->train();
      stream.join();
    });
    master_.ptr()->train();
    for (auto& o : outputs) o = o.to(master_device_);
    return at::cat(outputs);
  }

  // The replicas' gradients are not observed one by one (the hooks sit on the master's
  // parameters, which only a replica that is the master backpropagates into): the trace then
  // holds none, and diff judges dp's reduced gradients by the tolerance, saying so.
  std::vector<std::vector<at::Tensor>> every_rank_gradients(std::vector<at::Tensor> mine) override {
    if (direct_) return {std::move(mine)};
    return {};
  }

  void reduce_gradients() override {
    // One replica that is the master: its backward accumulated into the master's .grad already
    // and its forward updated the master's buffers (the dpbuffers fault's mean of one is itself).
    if (direct_) return;
    torch::NoGradGuard no_grad;
    // DataParallel's reduce-add: the SUM of the replicas' gradients is accumulated into the
    // master's .grad, as autograd accumulates Broadcast's backward into the master's leaves: what
    // an earlier accumulation micro-step left there stays and is added to (after zero_grad it is
    // zero or None). A parameter no replica used keeps its .grad as it was (None stays None).
    auto mp = master_.ptr()->parameters();
    for (size_t i = 0; i < mp.size(); ++i) {
      at::Tensor& sum = mp[i].mutable_grad();
      for (int64_t r = 0; r < used_; ++r) {
        const at::Tensor& g = replica_params_[static_cast<size_t>(r)][i].grad();
        if (!g.defined()) continue;
        // reduce_add onto the master's device (a copy only when replicas live elsewhere).
        const at::Tensor local = g.to(mp[i].device());
        if (sum.defined()) {
          sum.add_(local);
        } else if (k_ == 1 && local.is_same(g)) {
          sum = g;  // one replica on the master's device: its gradient is the sum, uncopied
        } else {
          sum = local.clone();
        }
      }
    }
    // Only replica 0's in-place buffer updates (BatchNorm running statistics) persist.
    auto mb = master_.ptr()->buffers();
    auto rb = replicas_[0].ptr()->buffers();
    for (size_t i = 0; i < mb.size(); ++i) mb[i].copy_(rb[i]);  // copy_ crosses devices
    if (fault_active(fault_, FaultKind::kDpBuffers, 0, step_)) average_replica_buffers();
  }

 private:
  const scenarios::ScenarioSpec& spec_;
  torch::nn::AnyModule master_;
  at::Device master_device_;  // where the master lives; gather() and reduce_add() target it
  // The `dpbuffers` fault: a plausible wrong rule, the mean of the replicas' buffers (integer
  // counters such as num_batches_tracked agree on every replica and stay as they are).
  void average_replica_buffers() {
    auto mb = master_.ptr()->buffers();
    for (size_t i = 0; i < mb.size(); ++i) {
      if (!mb[i].is_floating_point()) continue;
      at::Tensor sum = at::zeros_like(mb[i]);
      for (auto& replica : replicas_) sum += replica.ptr()->buffers()[i].to(sum.device());
      mb[i].copy_(sum / static_cast<double>(k_));
    }
  }

  int64_t k_;
  runtime::WorkerPool pool_;  // the replicas' threads, made once (replica 0: the caller's)
  std::optional<FaultSpec> fault_;
  // One replica on the master's device: DataParallel calls the module itself (below, forward_loss).
  bool direct_;
  ForwardDraws draws_;  // replica r's forward of step s draws as rank r's (forward_draws.h)
  std::vector<at::Device> replica_devices_;
  std::vector<bool> shares_params_;  // replica on the master's device: parameters are the master's
  int64_t step_ = 0;
  int64_t used_ = 0;  // replicas that got a chunk this step (the first ones)
  std::vector<torch::nn::AnyModule> replicas_;
  std::vector<std::vector<at::Tensor>> replica_params_;
};

}  // namespace

std::unique_ptr<GradientPath> make_data_parallel_path(const scenarios::ScenarioSpec& spec,
                                                      scenarios::ScenarioInstance& instance,
                                                      int64_t replicas,
                                                      const runtime::ExecutionContext& context,
                                                      std::optional<FaultSpec> fault) {
  return std::make_unique<DataParallelPath>(spec, instance, replicas, context, std::move(fault));
}

}  // namespace ddpbench::modes::data_parallel
