// scenarios_registry_test.cpp — the registry and the built-in scenario descriptors: lookup
// errors list what exists, every scenario builds a model deterministically from its seed, and
// each declares what the issue requires.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "errors.h"
#include "scenarios/registry.h"

namespace ddpbench::scenarios {
namespace {

TEST(ScenarioRegistry, UnknownNameListsKnownScenarios) {
  const ScenarioRegistry r = builtin_registry();
  try {
    r.get("resnet_typo");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    for (const auto& name : r.names()) EXPECT_NE(msg.find(name), std::string::npos) << msg;
  }
}

TEST(ScenarioRegistry, HasTheRequiredScenariosAndDefault) {
  const ScenarioRegistry r = builtin_registry();
  for (const char* name :
       {"linear_mse", "toy_cnn", "cifar_resnet18", "fashion_mnist_cnn", "resnet18_syncbn"}) {
    EXPECT_NO_THROW(r.get(name)) << name;
  }
  EXPECT_NO_THROW(r.get(kDefaultScenario));
  ScenarioRegistry dup;
  dup.add(r.get("toy_cnn"));
  EXPECT_THROW(dup.add(r.get("toy_cnn")), std::logic_error);
}

TEST(ScenarioRegistry, ModelsAreDeterministicInTheSeed) {
  const ScenarioRegistry registry = builtin_registry();
  for (const auto& s : registry.all()) {
    auto a = s.build_model(3).ptr()->parameters();
    auto b = s.build_model(3).ptr()->parameters();
    auto c = s.build_model(4).ptr()->parameters();
    ASSERT_EQ(a.size(), b.size()) << s.name;
    bool seed_matters = false;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(at::equal(a[i], b[i])) << s.name << " parameter " << i;
      seed_matters = seed_matters || !at::equal(a[i], c[i]);
    }
    EXPECT_TRUE(seed_matters) << s.name << ": the seed does not change the init";
  }
}

TEST(ScenarioRegistry, DescriptorsAreComplete) {
  const ScenarioRegistry registry = builtin_registry();
  for (const auto& s : registry.all()) {
    EXPECT_FALSE(s.summary.empty()) << s.name;
    EXPECT_GT(s.global_batch, 0) << s.name;
    EXPECT_GT(s.steps, 0) << s.name;
    EXPECT_GT(s.tolerances.float32.rtol, 0) << s.name;
    EXPECT_TRUE(s.build_model && s.build_dataset) << s.name;
  }
  const auto& resnet = registry.get("cifar_resnet18");
  EXPECT_EQ(resnet.global_batch, 256);
  EXPECT_TRUE(resnet.optimizer.nesterov);
  // BatchNorm without SyncBN is modelled by the exact reference, not declared away.
  EXPECT_TRUE(resnet.divergences.empty()) << "cifar_resnet18's checks must be able to fail";
  EXPECT_TRUE(registry.get("toy_cnn").divergences.empty());
  EXPECT_TRUE(registry.get("resnet18_syncbn").sync_bn);
  EXPECT_FALSE(registry.get("cifar_resnet18").sync_bn);
}

}  // namespace
}  // namespace ddpbench::scenarios
