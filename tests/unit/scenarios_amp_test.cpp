// scenarios_amp_test.cpp — mixed precision's building blocks (issue 34): AutocastScope does what
// `with torch.autocast(...)` does (eligible ops in the lower precision inside, the previous setting
// restored outside, nesting), and refuses what the linked libtorch cannot do; GradScaler
// reproduces torch.amp.GradScaler bit for bit over a run that backs off on inf and NaN and grows
// after clean steps (tests/support/grad_scaler_expected.py, run by the build's own Python).
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "errors.h"
#include "scenarios/optim/autocast_scope.h"
#include "scenarios/optim/grad_scaler.h"
#include "support/subprocess.h"
#include "support/test_paths.h"

namespace ddpbench::scenarios {
namespace {

TEST(AutocastScope, EligibleOpsRunInBfloat16InsideAndFloat32Outside) {
  const at::Tensor x = torch::randn({2, 4});
  const at::Tensor w = torch::randn({4, 3}, torch::requires_grad());
  {
    AutocastScope outer(c10::DeviceType::CPU, at::kBFloat16);
    EXPECT_EQ(torch::mm(x, w).scalar_type(), at::kBFloat16);
    {
      AutocastScope inner(c10::DeviceType::CPU, at::kBFloat16);
      EXPECT_EQ(torch::mm(x, w).scalar_type(), at::kBFloat16);
    }
    // The inner scope restored the outer's setting, not "off".
    const at::Tensor y = torch::mm(x, w);
    EXPECT_EQ(y.scalar_type(), at::kBFloat16);
    y.to(at::kFloat).sum().backward();
  }
  EXPECT_EQ(torch::mm(x, w).scalar_type(), at::kFloat);
  EXPECT_EQ(w.grad().scalar_type(), at::kFloat);  // parameters and gradients stay float32
}

TEST(AutocastScope, Float16OnTheCpuNeedsPyTorch2) {
  const at::Tensor x = torch::randn({2, 4});
#if TORCH_VERSION_MAJOR >= 2
  AutocastScope scope(c10::DeviceType::CPU, at::kHalf);
  EXPECT_EQ(torch::mm(x, x.t()).scalar_type(), at::kHalf);
#else
  try {
    AutocastScope scope(c10::DeviceType::CPU, at::kHalf);
    ADD_FAILURE() << "float16 autocast on 1.13's CPU was not refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("libtorch 1.13 has no float16 autocast"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(GradScaler({}, c10::Device(c10::kCPU)), InputError);
  EXPECT_EQ(torch::mm(x, x.t()).scalar_type(), at::kFloat);  // the refusal left autocast off
#endif
}

#if TORCH_VERSION_MAJOR >= 2
class GradScalerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = testing::make_temp_dir("grad-scaler");
    const std::string file = dir + "/expected.pt";
    const auto r = testing::run_process(
        {testing::kPython,
         std::string(testing::kSourceDir) + "/tests/support/grad_scaler_expected.py", file});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream in(file, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
    expected_ = new c10::Dict<c10::IValue, c10::IValue>(torch::pickle_load(bytes).toGenericDict());
    std::filesystem::remove_all(dir);
  }
  static void TearDownTestSuite() { delete expected_; }
  static c10::IValue at(const std::string& key) { return expected_->at(key); }
  static at::Tensor tensor(const std::string& key) { return at(key).toTensor(); }
  static std::string key(const char* what, int64_t step, int j) {
    return what + std::to_string(step) + "." + std::to_string(j);
  }
  static c10::Dict<c10::IValue, c10::IValue>* expected_;
};
c10::Dict<c10::IValue, c10::IValue>* GradScalerTest::expected_ = nullptr;

TEST_F(GradScalerTest, EveryStepMatchesPyTorchsGradScalerBitForBit) {
  GradScalerOptions options;
  options.growth_interval = 3;
  GradScaler scaler(options, c10::Device(c10::kCPU));
  EXPECT_EQ(scaler.current_scale(), 65536.0);
  EXPECT_TRUE(torch::equal(scaler.scale(torch::full({}, 3.0F)), torch::full({}, 3.0F * 65536)));
  const int64_t steps = at("steps").toInt();
  int skipped = 0;
  int grown = 0;
  for (int64_t i = 0; i < steps; ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    std::vector<at::Tensor> grads;
    for (int j = 0; j < 2; ++j) grads.push_back(tensor(key("grad", i, j)).clone());
    const double before = scaler.current_scale();
    scaler.unscale(grads);
    for (int j = 0; j < 2; ++j) {
      // equal_nan: a NaN gradient stays NaN after unscaling, in both.
      EXPECT_TRUE(at::allclose(grads[j], tensor(key("unscaled", i, j)), 0, 0, true))
          << grads[j] << tensor(key("unscaled", i, j));
    }
    EXPECT_EQ(scaler.found_inf(), at("skipped" + std::to_string(i)).toBool());
    skipped += scaler.found_inf() ? 1 : 0;
    scaler.update();
    EXPECT_EQ(scaler.current_scale(), tensor("scale" + std::to_string(i)).item<double>());
    EXPECT_EQ(scaler.growth_tracker(), tensor("tracker" + std::to_string(i)).item<int64_t>());
    grown += scaler.current_scale() > before ? 1 : 0;
  }
  // The run exercised every branch: skips (inf and NaN) and a growth.
  EXPECT_EQ(skipped, 3);
  EXPECT_EQ(grown, 1);
}

TEST_F(GradScalerTest, MisuseIsALogicError) {
  GradScaler scaler({}, c10::Device(c10::kCPU));
  EXPECT_THROW(scaler.update(), std::logic_error);
  std::vector<at::Tensor> half = {torch::ones({2}, at::kHalf)};
  EXPECT_THROW(scaler.unscale(half), std::logic_error);
  scaler.unscale({torch::ones({2})});
  EXPECT_THROW(scaler.unscale({torch::ones({2})}), std::logic_error);
  scaler.update();
  EXPECT_EQ(scaler.growth_tracker(), 1);
  scaler.set_state(torch::full({1}, 8.0F), torch::full({1}, 5, at::kInt));
  EXPECT_EQ(scaler.current_scale(), 8.0);
  EXPECT_EQ(scaler.growth_tracker(), 5);
}
#endif

}  // namespace
}  // namespace ddpbench::scenarios
