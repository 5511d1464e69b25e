// mode_training.cpp — see mode_training.h.
#include "support/mode_training.h"

#include "modes/data_parallel/data_parallel_path.h"
#include "modes/single/single_path.h"
#include "runtime/execution_context.h"

namespace ddpbench::testing {
namespace {

modes::TrainResult train_path(modes::GradientPath& path, const scenarios::ScenarioSpec& spec,
                              const scenarios::ScenarioInstance& instance,
                              const data::GlobalBatchPlan& plan,
                              const runtime::ExecutionContext& context, int64_t steps) {
  modes::TrainOptions options;
  options.steps = steps;
  return modes::train(path, {spec, *instance.dataset, plan, context}, options);
}

}  // namespace

modes::TrainResult train_single(const scenarios::ScenarioSpec& spec,
                                scenarios::ScenarioInstance& instance,
                                const data::GlobalBatchPlan& plan, int64_t steps,
                                at::ScalarType dtype) {
  const auto context = runtime::ExecutionContext::cpu(dtype);
  const auto path = modes::single::make_single_path(spec, instance, context);
  return train_path(*path, spec, instance, plan, context, steps);
}

modes::TrainResult train_data_parallel(const scenarios::ScenarioSpec& spec,
                                       scenarios::ScenarioInstance& instance,
                                       const data::GlobalBatchPlan& plan, int64_t steps,
                                       at::ScalarType dtype) {
  const auto context = runtime::ExecutionContext::cpu(dtype);
  const auto path =
      modes::data_parallel::make_data_parallel_path(spec, instance, plan.num_replicas(), context);
  return train_path(*path, spec, instance, plan, context, steps);
}

}  // namespace ddpbench::testing
