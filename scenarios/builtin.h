// builtin.h — the scenarios shipped with ddpbench, one factory per file in scenarios/.
#pragma once

#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioSpec linear_mse_scenario();
ScenarioSpec toy_cnn_scenario();
ScenarioSpec cifar_resnet18_scenario();
ScenarioSpec fashion_mnist_cnn_scenario();
ScenarioSpec resnet18_syncbn_scenario();
ScenarioSpec rmse_linear_scenario();

}  // namespace ddpbench::scenarios
