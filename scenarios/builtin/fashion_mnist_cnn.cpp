// fashion_mnist_cnn.cpp — scenario `fashion_mnist_cnn`: a small CNN on the real Fashion-MNIST
// training images shipped by Debian's dataset-fashion-mnist package (or --data-dir with the same
// four IDX .gz files). Skipped, with the reason, when the data is absent.
#include <fmt/format.h>
#include <torch/utils.h>

#include <filesystem>

#include "data/idx_images.h"
#include "data/image_dataset.h"
#include "errors.h"
#include "scenarios/models/fashion_cnn_net.h"
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {
namespace {

constexpr const char* kDefaultDir = "/usr/share/datasets/fashion-mnist";
constexpr const char* kImages = "train-images-idx3-ubyte.gz";
constexpr const char* kLabels = "train-labels-idx1-ubyte.gz";

constexpr const char* kTestImages = "t10k-images-idx3-ubyte.gz";
constexpr const char* kTestLabels = "t10k-labels-idx1-ubyte.gz";

std::string data_dir(const BuildRequest& request) {
  return request.data_dir.empty() ? kDefaultDir : request.data_dir;
}

std::shared_ptr<const data::Dataset> fashion_dataset(const std::filesystem::path& dir,
                                                     const char* image_file, const char* label_file,
                                                     int64_t seed) {
  auto images = std::make_shared<data::InMemoryImages>(
      data::load_idx_images((dir / image_file).string(), (dir / label_file).string()));
  // The network's first linear layer is sized for 28x28: anything else would fail inside it.
  const data::ImageShape shape = images->shape();
  if (shape.channels != 1 || shape.height != 28 || shape.width != 28) {
    throw InputError(fmt::format(
        "{}: images are {}x{}x{}, fashion_mnist_cnn needs 1x28x28 (the Fashion-MNIST files)",
        (dir / image_file).string(), shape.channels, shape.height, shape.width));
  }
  data::ImageTransformOptions transform;
  transform.mean = {0.2860F};  // Fashion-MNIST training-set statistics
  transform.stddev = {0.3530F};
  transform.seed = seed;
  return std::make_shared<data::ImageDataset>(images, transform);
}

}  // namespace

ScenarioSpec fashion_mnist_cnn_scenario() {
  ScenarioSpec s;
  s.name = "fashion_mnist_cnn";
  s.summary = "small CNN on real Fashion-MNIST images (Debian dataset-fashion-mnist)";
  s.model_name = "2-conv CNN";
  s.dataset_name = "Fashion-MNIST train (60000 x 1x28x28)";
  s.reads_data_dir = true;
  s.global_batch = 64;
  s.steps = 20;
  s.seed = 0;
  s.loss = LossKind::kCrossEntropy;
  s.optimizer.lr = 0.01;
  s.optimizer.momentum = 0.9;
  s.unavailable_reason = [](const BuildRequest& request) -> std::optional<std::string> {
    // Only the default location is a skip; an explicit --data-dir that lacks files is bad input.
    if (!request.data_dir.empty()) return std::nullopt;
    if (std::filesystem::exists(std::filesystem::path(kDefaultDir) / kImages)) return std::nullopt;
    return fmt::format(
        "Fashion-MNIST not found in {} (install the Debian package dataset-fashion-mnist or pass "
        "--data-dir)",
        kDefaultDir);
  };
  s.build_model = [](int64_t seed) {
    torch::manual_seed(static_cast<uint64_t>(seed));
    return torch::nn::AnyModule(models::FashionCnn());
  };
  s.build_dataset = [](const BuildRequest& request) -> std::shared_ptr<const data::Dataset> {
    return fashion_dataset(data_dir(request), kImages, kLabels, request.seed);
  };
  // The held-out split is t10k; without it (a --data-dir holding only the training files) the
  // evaluation pass is skipped with that reason rather than run on training images.
  s.build_eval_dataset = [](const BuildRequest& request) -> EvalSet {
    const std::filesystem::path dir = data_dir(request);
    if (!std::filesystem::exists(dir / kTestImages)) {
      return {nullptr, fmt::format("no held-out split: {} has no {}", dir.string(), kTestImages)};
    }
    return {fashion_dataset(dir, kTestImages, kTestLabels, request.seed), ""};
  };
  return s;
}

}  // namespace ddpbench::scenarios
