// cifar_data.h — the CIFAR-shaped training data shared by the CIFAR scenarios: the real CIFAR-10
// binary files when --data-dir is given, otherwise the embedded synthetic CIFAR-10.
#pragma once

#include <memory>

#include "data/dataset.h"
#include "data/image_transform.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

inline constexpr int64_t kSyntheticCifarSize = 50000;  // the size of CIFAR-10's training split

// CIFAR-10 per-channel statistics used by the usual training recipes.
data::ImageTransformOptions cifar_train_transform(int64_t seed);

std::shared_ptr<const data::Dataset> make_cifar_dataset(const BuildRequest& request,
                                                        data::ImageTransformOptions transform);

}  // namespace ddpbench::scenarios
