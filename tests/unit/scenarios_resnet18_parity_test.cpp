// scenarios_resnet18_parity_test.cpp — ddpbench's ResNet-18 against torchvision's resnet18
// (reference/resnet18_oracle.py): same state names and shapes, same init under the same seed,
// and — with torchvision's weights loaded — the same logits, loss, parameter gradients and
// BatchNorm running statistics for the same input, within float32 tolerance.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "scenarios/models/resnet.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace ddpbench::scenarios {
namespace {

using TensorMap = std::map<std::string, at::Tensor>;

class ResNet18Parity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = testing::make_temp_dir("resnet18");
    const std::string file = dir + "/oracle.pt";
    const auto r = testing::run_process(
        {testing::kPython, std::string(testing::kSourceDir) + "/reference/resnet18_oracle.py",
         "--out", file, "--seed", "0"});
    ASSERT_EQ(r.exit_code, 0) << "oracle needs python3-torchvision: " << r.err;
    std::ifstream in(file, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
    std::filesystem::remove_all(dir);
    oracle_ = new TensorMap();
    for (const auto& kv : torch::pickle_load(bytes).toGenericDict()) {
      (*oracle_)[kv.key().toStringRef()] = kv.value().toTensor();
    }
  }
  static void TearDownTestSuite() {
    delete oracle_;
    oracle_ = nullptr;
  }

  void SetUp() override {
    ASSERT_NE(oracle_, nullptr);
    torch::set_num_threads(1);  // the oracle ran on one thread: same reduction order
  }

  // Oracle entries "prefix.<name>" as name -> tensor.
  static TensorMap with_prefix(const std::string& prefix) {
    TensorMap out;
    for (const auto& [k, v] : *oracle_) {
      if (k.rfind(prefix, 0) == 0) out[k.substr(prefix.size())] = v;
    }
    return out;
  }

  static TensorMap state_of(const torch::nn::Module& m) {
    TensorMap out;
    for (const auto& p : m.named_parameters()) out[p.key()] = p.value();
    for (const auto& b : m.named_buffers()) out[b.key()] = b.value();
    return out;
  }

  static void expect_close(const at::Tensor& got, const at::Tensor& want, double rtol, double atol,
                           const std::string& what) {
    ASSERT_EQ(got.sizes(), want.sizes()) << what;
    const double max_diff = (got.to(at::kDouble) - want.to(at::kDouble)).abs().max().item<double>();
    EXPECT_TRUE(at::allclose(got, want, rtol, atol)) << what << ": max |diff| " << max_diff;
  }

  static TensorMap* oracle_;
};
TensorMap* ResNet18Parity::oracle_ = nullptr;

TEST_F(ResNet18Parity, SameStateNamesAndShapes) {
  torch::manual_seed(0);
  models::ResNet model(models::resnet18_shape(), 10);
  const TensorMap mine = state_of(*model);
  const TensorMap theirs = with_prefix("init.");
  ASSERT_EQ(mine.size(), theirs.size());
  for (const auto& [name, t] : theirs) {
    ASSERT_TRUE(mine.count(name)) << "missing " << name;
    EXPECT_EQ(mine.at(name).sizes(), t.sizes()) << name;
    EXPECT_EQ(mine.at(name).dtype(), t.dtype()) << name;
  }
}

TEST_F(ResNet18Parity, SameInitialWeightsForTheSameSeed) {
  torch::manual_seed(0);
  models::ResNet model(models::resnet18_shape(), 10);
  const TensorMap mine = state_of(*model);
  for (const auto& [name, t] : with_prefix("init.")) {
    EXPECT_TRUE(at::equal(mine.at(name), t)) << name << " differs from torchvision's init";
  }
}

TEST_F(ResNet18Parity, SameLogitsGradientsAndRunningStatsForTheSameWeights) {
  torch::manual_seed(1234);  // deliberately not the oracle's seed: weights come from the file
  models::ResNet model(models::resnet18_shape(), 10);
  {
    torch::NoGradGuard no_grad;
    const TensorMap init = with_prefix("init.");
    for (auto& [name, t] : state_of(*model)) t.copy_(init.at(name));
  }
  model->train();
  const at::Tensor logits = model->forward(oracle_->at("input"));
  const at::Tensor loss = torch::nn::functional::cross_entropy(logits, oracle_->at("target"));
  loss.backward();
  expect_close(logits, oracle_->at("logits"), 1.3e-6, 1e-5, "logits");
  expect_close(loss, oracle_->at("loss"), 1.3e-6, 1e-5, "loss");
  for (const auto& p : model->named_parameters()) {
    // Gradients sum many products: allow float32 accumulation-order noise.
    expect_close(p.value().grad(), oracle_->at("grad." + p.key()), 1e-4, 1e-5, "grad " + p.key());
  }
  for (const auto& b : model->named_buffers()) {
    expect_close(b.value(), oracle_->at("after." + b.key()), 1.3e-6, 1e-5, "buffer " + b.key());
  }
}

}  // namespace
}  // namespace ddpbench::scenarios
