// single_path.cpp — see single_path.h.
#include "modes/single/single_path.h"

#include <torch/torch.h>

#include "scenarios/training_recipe.h"

namespace ddpbench::modes::single {
namespace {

class SinglePath : public GradientPath {
 public:
  SinglePath(const scenarios::ScenarioSpec& spec, scenarios::ScenarioInstance& instance,
             const runtime::ExecutionContext& context)
      : spec_(spec), model_(instance.model) {
    context.place_model(*model_.ptr());
  }

  torch::nn::Module& module() override { return *model_.ptr(); }
  std::string who() const override { return "single"; }

  std::vector<std::vector<int64_t>> step_shards(const data::EpochPlan& epoch,
                                                int64_t step_in_epoch) const override {
    return {epoch.global_batch(step_in_epoch)};
  }

  at::Tensor forward_loss(const std::vector<data::Batch>& shards, int64_t /*step*/) override {
    const data::Batch& batch = shards.front();
    return scenarios::compute_loss(spec_.loss, model_.forward(batch.inputs), batch.targets);
  }

  void backward(const at::Tensor& loss) override { loss.backward(); }
  void reduce_gradients() override {}  // one device: the gradients are already the gradients

 private:
  const scenarios::ScenarioSpec& spec_;
  torch::nn::AnyModule model_;
};

}  // namespace

std::unique_ptr<GradientPath> make_single_path(const scenarios::ScenarioSpec& spec,
                                               scenarios::ScenarioInstance& instance,
                                               const runtime::ExecutionContext& context) {
  return std::make_unique<SinglePath>(spec, instance, context);
}

}  // namespace ddpbench::modes::single
