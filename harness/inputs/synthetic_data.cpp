// synthetic_data.cpp — see synthetic_data.h.
#include "inputs/synthetic_data.h"

#include <fmt/format.h>

#include <memory>

#include "data/synthetic_tensors.h"

namespace ddpbench::inputs {
namespace {

// The held-out split is generated on demand, so its size costs nothing: larger than any
// --eval-size a run asks for in practice, which then takes its first samples.
constexpr int64_t kHeldOutSamples = int64_t{1} << 20;

}  // namespace

scenarios::ScenarioSpec with_synthetic_data(scenarios::ScenarioSpec spec) {
  const data::SyntheticTensorsShape shape = spec.synthetic;
  spec.dataset_name =
      fmt::format("synthetic {} ({} samples)", data::describe_shape(shape), shape.samples);
  spec.reads_data_dir = false;
  spec.unavailable_reason = {};  // the scenario's own data (a package it needs) is not used
  spec.build_dataset = [shape](const scenarios::BuildRequest& request) {
    return std::make_shared<const data::SyntheticTensors>(shape, shape.samples, request.seed);
  };
  if (shape.num_classes > 0) {
    spec.build_eval_dataset = [shape](const scenarios::BuildRequest& request) {
      return scenarios::EvalSet{std::make_shared<const data::SyntheticTensors>(
                                    shape, kHeldOutSamples, request.seed, shape.samples),
                                ""};
    };
  } else {
    spec.build_eval_dataset = nullptr;  // regression targets: no accuracy to measure
  }
  return spec;
}

}  // namespace ddpbench::inputs
