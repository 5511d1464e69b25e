// data_parallel_path.cpp — see data_parallel_path.h.
#include "modes/data_parallel/data_parallel_path.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <exception>
#include <functional>
#include <thread>

#include "scenarios/training_recipe.h"

namespace ddpbench::modes::data_parallel {
namespace {

// replicate(): parameters and buffers copied from the master, gradients cleared.
void copy_master_into(torch::nn::Module& master, torch::nn::Module& replica) {
  torch::NoGradGuard no_grad;
  auto mp = master.parameters();
  auto rp = replica.parameters();
  for (size_t i = 0; i < mp.size(); ++i) {
    rp[i].copy_(mp[i]);
    rp[i].mutable_grad() = at::Tensor();
  }
  auto mb = master.buffers();
  auto rb = replica.buffers();
  for (size_t i = 0; i < mb.size(); ++i) rb[i].copy_(mb[i]);
}

// Runs fn(r) for every replica on its own thread; rethrows the first failure.
void parallel_for_replicas(int64_t k, const std::function<void(int64_t)>& fn) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(k));
  for (int64_t r = 0; r < k; ++r) {
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (...) {
        errors[static_cast<size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

class DataParallelPath : public GradientPath {
 public:
  DataParallelPath(const scenarios::ScenarioSpec& spec, scenarios::ScenarioInstance& instance,
                   int64_t replicas, const runtime::ExecutionContext& context)
      : spec_(spec), master_(instance.model), k_(replicas) {
    context.place_model(*master_.ptr());
    for (int64_t r = 0; r < k_; ++r) {
      replicas_.push_back(master_.clone());
      context.place_model(*replicas_.back().ptr(), context.replica_device(r));
      replicas_.back().ptr()->train();
      replica_params_.push_back(replicas_.back().ptr()->parameters());
    }
  }

  torch::nn::Module& module() override { return *master_.ptr(); }
  std::string who() const override { return "dp"; }

  std::vector<int64_t> step_samples(const data::EpochPlan& epoch,
                                    int64_t step_in_epoch) const override {
    return epoch.global_batch(step_in_epoch);
  }

  at::Tensor forward_loss(const data::Batch& batch, int64_t /*step*/) override {
    // scatter(): every rank's local batch has the same size, so the global batch splits into K
    // equal chunks and chunk r is exactly rank r's slice of the plan.
    const int64_t chunk = batch.inputs.size(0) / k_;
    std::vector<at::Tensor> outputs(static_cast<size_t>(k_));
    parallel_for_replicas(k_, [&](int64_t r) {
      torch::nn::AnyModule& replica = replicas_[static_cast<size_t>(r)];
      copy_master_into(*master_.ptr(), *replica.ptr());
      outputs[static_cast<size_t>(r)] = replica.forward(batch.inputs.narrow(0, r * chunk, chunk));
    });
    // gather() in replica order, then the loss on the whole gathered output.
    return scenarios::compute_loss(spec_.loss, at::cat(outputs), batch.targets);
  }

  void backward(const at::Tensor& loss) override { loss.backward(); }

  void reduce_gradients() override {
    torch::NoGradGuard no_grad;
    // DataParallel's reduce-add: the master's gradient is the SUM of the replicas'.
    auto mp = master_.ptr()->parameters();
    for (size_t i = 0; i < mp.size(); ++i) {
      at::Tensor sum;
      for (const auto& params : replica_params_) {
        const at::Tensor& g = params[i].grad();
        if (!g.defined()) continue;
        sum = sum.defined() ? sum + g : g.clone();
      }
      mp[i].mutable_grad() = sum;
    }
    // Only replica 0's in-place buffer updates (BatchNorm running statistics) persist.
    auto mb = master_.ptr()->buffers();
    auto rb = replicas_[0].ptr()->buffers();
    for (size_t i = 0; i < mb.size(); ++i) mb[i].copy_(rb[i]);
  }

 private:
  const scenarios::ScenarioSpec& spec_;
  torch::nn::AnyModule master_;
  int64_t k_;
  std::vector<torch::nn::AnyModule> replicas_;
  std::vector<std::vector<at::Tensor>> replica_params_;
};

}  // namespace

std::unique_ptr<GradientPath> make_data_parallel_path(const scenarios::ScenarioSpec& spec,
                                                      scenarios::ScenarioInstance& instance,
                                                      int64_t replicas,
                                                      const runtime::ExecutionContext& context) {
  return std::make_unique<DataParallelPath>(spec, instance, replicas, context);
}

}  // namespace ddpbench::modes::data_parallel
