// single_path.cpp — see single_path.h.
#include "modes/single/single_path.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "errors.h"
#include "modes/single/ghost_batch_norm.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::modes::single {
namespace {

class SinglePath : public GradientPath {
 public:
  SinglePath(const scenarios::ScenarioSpec& spec, scenarios::ScenarioInstance& instance,
             const runtime::ExecutionContext& context, const ReferenceRule& rule)
      : spec_(spec), model_(instance.model), rule_(rule) {
    context.place_model(*model_.ptr());
    if (rule_.forward_per_replica) install_ghost_batch_norm(*model_.ptr(), rule_.replicas);
  }

  torch::nn::Module& module() override { return *model_.ptr(); }
  std::string who() const override { return rule_.plain() ? "single" : "reference"; }

  std::vector<std::vector<int64_t>> step_shards(const data::EpochPlan& epoch,
                                                int64_t step_in_epoch) const override {
    return {epoch.global_batch(step_in_epoch)};
  }

  at::Tensor forward_loss(const std::vector<data::Batch>& shards, int64_t step) override {
    const data::Batch& batch = shards.front();
    if (rule_.plain()) {
      return scenarios::compute_loss(spec_.loss, model_.forward(batch.inputs), batch.targets);
    }
    const int64_t k = rule_.replicas;
    if (batch.inputs.size(0) % k != 0) {
      throw WorkerFailure(fmt::format("reference: step {}: global batch {} does not split into {} "
                                      "equal rank chunks",
                                      step, batch.inputs.size(0), k));
    }
    const std::vector<at::Tensor> targets = batch.targets.chunk(k);
    const std::vector<at::Tensor> outputs = model_.forward(batch.inputs).chunk(k);
    if (!rule_.mean_of_replica_losses) {
      return scenarios::compute_loss(spec_.loss, at::cat(outputs), batch.targets);
    }
    at::Tensor sum = scenarios::compute_loss(spec_.loss, outputs[0], targets[0]);
    for (int64_t r = 1; r < k; ++r) {
      sum = sum + scenarios::compute_loss(spec_.loss, outputs[r], targets[r]);
    }
    return sum / static_cast<double>(k);
  }

  void backward(const at::Tensor& loss) override { loss.backward(); }
  void reduce_gradients() override {}  // one device: the gradients are already the gradients

  at::Tensor eval_forward(const at::Tensor& inputs) override {
    torch::NoGradGuard no_grad;
    model_.ptr()->eval();
    at::Tensor out = model_.forward(inputs);
    model_.ptr()->train();
    return out;
  }

 private:
  const scenarios::ScenarioSpec& spec_;
  torch::nn::AnyModule model_;
  ReferenceRule rule_;
};

}  // namespace

std::unique_ptr<GradientPath> make_single_path(const scenarios::ScenarioSpec& spec,
                                               scenarios::ScenarioInstance& instance,
                                               const runtime::ExecutionContext& context,
                                               const ReferenceRule& rule) {
  return std::make_unique<SinglePath>(spec, instance, context, rule);
}

}  // namespace ddpbench::modes::single
