// dp_trainer.cpp — see dp_trainer.h.
#include "modes/data_parallel/dp_trainer.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <exception>
#include <optional>
#include <thread>

#include "errors.h"
#include "metrics/stopwatch.h"
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

}  // namespace

DpTrainResult train_data_parallel(const scenarios::ScenarioSpec& spec,
                                  scenarios::ScenarioInstance& instance,
                                  const data::GlobalBatchPlan& plan,
                                  const DpTrainOptions& options) {
  const int64_t k = plan.num_replicas();
  torch::nn::Module& master = *instance.model.ptr();
  cast_floating_point(master, options.dtype);
  master.train();
  std::vector<torch::nn::AnyModule> replicas;
  for (int64_t r = 0; r < k; ++r) {
    replicas.push_back(instance.model.clone());
    replicas.back().ptr()->train();
  }
  std::vector<std::vector<at::Tensor>> replica_params;
  for (auto& replica : replicas) replica_params.push_back(replica.ptr()->parameters());
  auto optimizer = scenarios::make_optimizer(spec.optimizer, master.parameters());

  DpTrainResult result;
  data::PlanCursor cursor(plan);
  for (int64_t step = 0; step < options.steps; ++step) {
    metrics::Stopwatch watch;
    metrics::PhaseTimes t;
    data::StepPosition pos;
    const data::EpochPlan& epoch = cursor.seek(step, pos);
    std::vector<at::Tensor> outputs(static_cast<size_t>(k));
    std::vector<at::Tensor> targets(static_cast<size_t>(k));
    parallel_for_replicas(k, [&](int64_t r) {
      torch::nn::AnyModule& replica = replicas[static_cast<size_t>(r)];
      copy_master_into(master, *replica.ptr());
      const data::Batch chunk = data::cast_batch(
          data::collate(*instance.dataset, epoch.local_batch(pos.step_in_epoch, r), pos.epoch),
          options.dtype);
      targets[static_cast<size_t>(r)] = chunk.targets;
      outputs[static_cast<size_t>(r)] = replica.forward(chunk.inputs);
    });
    t.forward = watch.lap();  // scatter + replica forwards, in parallel (data loading included)
    // gather() onto device 0, then the loss on the whole gathered output.
    const at::Tensor loss = scenarios::compute_loss(spec.loss, at::cat(outputs), at::cat(targets));
    const double value = loss.item<double>();
    if (!std::isfinite(value)) {
      throw WorkerFailure(fmt::format("dp: non-finite loss ({}) at step {}", value, step));
    }
    optimizer->zero_grad();
    loss.backward();
    t.backward = watch.lap();
    {
      // DataParallel's reduce-add: the master's gradient is the SUM of the replicas'.
      torch::NoGradGuard no_grad;
      auto mp = master.parameters();
      for (size_t i = 0; i < mp.size(); ++i) {
        at::Tensor sum;
        for (const auto& params : replica_params) {
          const at::Tensor& g = params[i].grad();
          if (!g.defined()) continue;
          sum = sum.defined() ? sum + g : g.clone();
        }
        mp[i].mutable_grad() = sum;
      }
      // Only replica 0's in-place buffer updates (BatchNorm running stats) persist.
      auto mb = master.buffers();
      auto rb = replicas[0].ptr()->buffers();
      for (size_t i = 0; i < mb.size(); ++i) mb[i].copy_(rb[i]);
    }
    t.comm_wait = watch.lap();  // the reduce-add of replica gradients
    if (options.after_reduce) options.after_reduce(step, master);
    watch.lap();
    optimizer->step();
    t.optimizer = watch.lap();
    t.total = t.forward + t.backward + t.comm_wait + t.optimizer;
    result.losses.push_back(value);
    if (options.on_step) options.on_step(step, value);
    result.step_times.push_back(t);
  }
  result.final_state = capture_state(master);
  return result;
}

}  // namespace ddpbench::modes::data_parallel
