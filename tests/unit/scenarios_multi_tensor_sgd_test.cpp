// scenarios_multi_tensor_sgd_test.cpp — the multi-tensor SGD every mode steps with computes what
// libtorch's torch::optim::SGD computes, bitwise on CPU, for every option the scenarios use
// (momentum, dampening, weight decay, nesterov), skips parameters without a gradient, leaves the
// gradients untouched, and keeps its momentum buffers under the key libtorch's own SGD reads.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "scenarios/optim/multi_tensor_sgd.h"

namespace ddpbench::scenarios {
namespace {

struct Case {
  std::string name;
  torch::optim::SGDOptions options;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::vector<at::Tensor> make_parameters() {
  torch::manual_seed(11);
  std::vector<at::Tensor> p = {torch::randn({4, 3}), torch::randn({3}), torch::randn({2, 2, 3}),
                               torch::randn({5})};
  for (auto& t : p) t.set_requires_grad(true);
  return p;
}

std::vector<at::Tensor> clone_parameters(const std::vector<at::Tensor>& source) {
  std::vector<at::Tensor> p;
  for (const auto& t : source) p.push_back(t.detach().clone().set_requires_grad(true));
  return p;
}

// The same gradients for both parameter lists; the last parameter gets none (frozen).
void set_gradients(std::vector<at::Tensor>& a, std::vector<at::Tensor>& b, int step) {
  torch::manual_seed(100 + step);
  for (size_t i = 0; i + 1 < a.size(); ++i) {
    const at::Tensor g = torch::randn(a[i].sizes());
    a[i].mutable_grad() = g.clone();
    b[i].mutable_grad() = g.clone();
  }
}

void expect_bitwise(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b,
                    const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::equal(a[i], b[i])) << what << " " << i << " differs";
  }
}

class MultiTensorSgdTest : public ::testing::TestWithParam<Case> {};

TEST_P(MultiTensorSgdTest, MatchesLibtorchSgdBitwise) {
  std::vector<at::Tensor> ours = make_parameters();
  std::vector<at::Tensor> theirs = clone_parameters(ours);
  const at::Tensor frozen_before = ours.back().detach().clone();
  MultiTensorSGD multi(ours, GetParam().options);
  torch::optim::SGD reference(theirs, GetParam().options);
  for (int step = 0; step < 4; ++step) {
    set_gradients(ours, theirs, step);
    std::vector<at::Tensor> grads_before;
    for (size_t i = 0; i + 1 < ours.size(); ++i) grads_before.push_back(ours[i].grad().clone());
    multi.step();
    reference.step();
    expect_bitwise(ours, theirs, "step " + std::to_string(step) + " parameter");
    for (size_t i = 0; i + 1 < ours.size(); ++i) {
      EXPECT_TRUE(torch::equal(ours[i].grad(), grads_before[i])) << "gradient " << i << " changed";
    }
  }
  EXPECT_TRUE(torch::equal(ours.back(), frozen_before)) << "a parameter without gradient moved";
  EXPECT_FALSE(multi.momentum_buffer(ours.back()).defined());
}

// Each option changes the result: a step that ignored one would fail the test above.
INSTANTIATE_TEST_SUITE_P(
    Options, MultiTensorSgdTest,
    ::testing::Values(
        Case{"plain", torch::optim::SGDOptions(0.1)},
        Case{"momentum", torch::optim::SGDOptions(0.1).momentum(0.9)},
        Case{"dampening", torch::optim::SGDOptions(0.1).momentum(0.9).dampening(0.3)},
        Case{"weight_decay", torch::optim::SGDOptions(0.1).momentum(0.9).weight_decay(5e-4)},
        Case{"nesterov",
             torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-4).nesterov(true)},
        Case{"nesterov_no_decay", torch::optim::SGDOptions(0.05).momentum(0.8).nesterov(true)}),
    [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// libtorch's own SGD::step continues from the buffers the multi-tensor step left: if the state
// key differed (a string in 1.13, the TensorImpl pointer in 2.x), it would start a new buffer and
// the third step would differ from three reference steps.
TEST(MultiTensorSgd, MomentumBuffersUseLibtorchsStateKey) {
  const auto options = torch::optim::SGDOptions(0.1).momentum(0.9);
  std::vector<at::Tensor> ours = make_parameters();
  std::vector<at::Tensor> theirs = clone_parameters(ours);
  MultiTensorSGD multi(ours, options);
  torch::optim::SGD reference(theirs, options);
  for (int step = 0; step < 3; ++step) {
    set_gradients(ours, theirs, step);
    if (step < 2) {
      multi.step();
    } else {
      multi.torch::optim::SGD::step();
    }
    reference.step();
  }
  expect_bitwise(ours, theirs, "parameter");
}

TEST(MultiTensorSgd, SetMomentumBufferReplacesAndErases) {
  std::vector<at::Tensor> p = make_parameters();
  MultiTensorSGD multi(p, torch::optim::SGDOptions(0.1).momentum(0.9));
  EXPECT_FALSE(multi.momentum_buffer(p[0]).defined());
  const at::Tensor buffer = torch::full({4, 3}, 2.0);
  multi.set_momentum_buffer(p[0], buffer);
  EXPECT_TRUE(torch::equal(multi.momentum_buffer(p[0]), buffer));
  EXPECT_FALSE(multi.momentum_buffer(p[1]).defined());
  multi.set_momentum_buffer(p[0], at::Tensor());
  EXPECT_FALSE(multi.momentum_buffer(p[0]).defined());
}

}  // namespace
}  // namespace ddpbench::scenarios
