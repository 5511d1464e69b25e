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

// The held-out set of the evaluation pass, with `transform`'s normalisation and no augmentation:
// CIFAR-10's test_batch.bin with --data-dir; without, 10000 synthetic samples keyed after the
// 50000 training keys (disjoint from every training sample). A --data-dir without test_batch.bin
// has no held-out split: the pass is skipped with that reason, never run on training samples.
EvalSet make_cifar_eval_set(const BuildRequest& request, data::ImageTransformOptions transform);

}  // namespace ddpbench::scenarios
