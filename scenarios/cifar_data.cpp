// cifar_data.cpp — see cifar_data.h.
#include "scenarios/cifar_data.h"

#include <fmt/format.h>

#include <filesystem>

#include "data/cifar10_binary.h"
#include "data/image_dataset.h"
#include "data/synthetic_cifar.h"

namespace ddpbench::scenarios {

data::ImageTransformOptions cifar_train_transform(int64_t seed) {
  data::ImageTransformOptions t;
  t.crop_padding = 4;  // RandomCrop(32, padding=4)
  t.random_flip = true;
  t.mean = {0.4914F, 0.4822F, 0.4465F};
  t.stddev = {0.2023F, 0.1994F, 0.2010F};
  t.seed = seed;
  return t;
}

std::shared_ptr<const data::Dataset> make_cifar_dataset(const BuildRequest& request,
                                                        data::ImageTransformOptions transform) {
  std::shared_ptr<const data::ImageSource> source;
  if (request.data_dir.empty()) {
    source = std::make_shared<data::SyntheticCifar>(kSyntheticCifarSize, request.seed);
  } else {
    source = std::make_shared<data::InMemoryImages>(
        data::load_cifar10_binary(request.data_dir, data::Cifar10Split::kTrain));
  }
  return std::make_shared<data::ImageDataset>(std::move(source), std::move(transform));
}

EvalSet make_cifar_eval_set(const BuildRequest& request, data::ImageTransformOptions transform) {
  constexpr int64_t kHeldOut = 10000;  // the size of CIFAR-10's test split
  transform.crop_padding = 0;          // evaluation sees the images as they are
  transform.random_flip = false;
  std::shared_ptr<const data::ImageSource> source;
  if (request.data_dir.empty()) {
    source = std::make_shared<data::SyntheticCifar>(kHeldOut, request.seed, kSyntheticCifarSize);
  } else if (std::filesystem::exists(std::filesystem::path(request.data_dir) / "test_batch.bin")) {
    source = std::make_shared<data::InMemoryImages>(
        data::load_cifar10_binary(request.data_dir, data::Cifar10Split::kTest));
  } else {
    return {nullptr, fmt::format("no held-out split: {} has no test_batch.bin", request.data_dir)};
  }
  return {std::make_shared<data::ImageDataset>(std::move(source), std::move(transform)), ""};
}

}  // namespace ddpbench::scenarios
