// modes_checkpoint_test.cpp — checkpoints (modes/common/checkpoint.h) against PyTorch: a
// cifar_resnet18 checkpoint, bare or with DDP's "module." keys, loads into
// torchvision.models.resnet18(num_classes=10) with strict=True and its optimizer part into
// torch.optim.SGD (reference/checkpoint_oracle.py), and torchvision then computes the logits
// ddpbench's model computes from the same state — a doctored logit fails the oracle. Reading back
// gives what was saved, in either key form; a file that does not fit the model is refused.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>

#include "errors.h"
#include "modes/common/checkpoint.h"
#include "modes/common/model_state.h"
#include "modes/common/step_loop.h"
#include "modes/single/single_path.h"
#include "runtime/execution_context.h"
#include "scenarios/registry.h"
#include "support/subprocess.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench::modes {
namespace {

void write_file(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

testing::ProcessResult oracle(std::vector<std::string> args) {
  args.insert(args.begin(), {testing::kPython,
                             std::string(testing::kSourceDir) + "/reference/checkpoint_oracle.py"});
  return testing::run_process(args);
}

// cifar_resnet18 after two SGD steps at batch 8 (momentum buffers exist, BatchNorm statistics
// moved), and a checkpoint of it.
class ResNet18Checkpoint : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    torch::set_num_threads(1);  // the oracle runs on one thread: the same reduction order
    path_ = single::make_single_path(spec_, instance_, context_);
    TrainOptions options;
    options.checking = false;
    loop_ = std::make_unique<StepLoop>(*path_, inputs_, options);
    loop_->run_step(0);
    loop_->run_step(1);
  }

  std::vector<char> save(const std::string& prefix) {
    const CheckpointMeta meta{spec_.name, "single", 0, 1, 8, "float32", 2, 0};
    return checkpoint_bytes(loop_->module(), loop_->optimizer(), spec_.optimizer, meta, prefix);
  }

  const scenarios::ScenarioRegistry registry_ = scenarios::builtin_registry();
  const scenarios::ScenarioSpec& spec_ = registry_.get("cifar_resnet18");
  const runtime::ExecutionContext context_ = runtime::ExecutionContext::cpu(at::kFloat);
  scenarios::ScenarioInstance instance_ = scenarios::instantiate(spec_, {0, ""});
  const data::GlobalBatchPlan plan_{{instance_.dataset->size(), 1, true, 0, false}, 8};
  const TrainInputs inputs_{spec_, *instance_.dataset, plan_, context_};
  std::unique_ptr<GradientPath> path_;
  std::unique_ptr<StepLoop> loop_;
};

TEST_F(ResNet18Checkpoint, LoadsIntoTorchvisionStrictlyAndGivesTheSameLogits) {
  // ddpbench's own logits from the checkpoint's state, in eval mode (running statistics).
  torch::manual_seed(7);
  const at::Tensor input = torch::randn({4, 3, 32, 32});
  instance_.model.ptr()->eval();
  at::Tensor logits;
  {
    torch::NoGradGuard no_grad;
    logits = instance_.model.forward(input);
  }
  write_file(path("logits.pt"), pickle_state({{"input", input}, {"logits", logits}}));

  for (const std::string prefix : {"", "module."}) {
    write_file(path("ckpt.pt"), save(prefix));
    const auto r = oracle(
        {"--checkpoint", path("ckpt.pt"), "--model", "resnet18", "--logits", path("logits.pt")});
    EXPECT_EQ(r.exit_code, 0) << prefix << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("loaded strict=True"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("62 momentum buffers"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("logits agree"), std::string::npos) << r.out;
  }

  // The comparison can fail: one logit off by 1e-3.
  const at::Tensor doctored = logits.clone();
  doctored[0][0] += 1e-3;
  write_file(path("logits.pt"), pickle_state({{"input", input}, {"logits", doctored}}));
  const auto bad = oracle(
      {"--checkpoint", path("ckpt.pt"), "--model", "resnet18", "--logits", path("logits.pt")});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("FAIL: logits differ"), std::string::npos) << bad.out;
}

TEST_F(ResNet18Checkpoint, ReadsBackWhatItSavedInEitherKeyForm) {
  const TrainingState saved = capture_training_state(loop_->module(), loop_->optimizer());
  for (const std::string prefix : {"", "module."}) {
    const Checkpoint c = parse_checkpoint(save(prefix), "ckpt.pt", loop_->module());
    EXPECT_EQ(c.meta.scenario, "cifar_resnet18");
    EXPECT_EQ(c.meta.step, 2);
    ASSERT_EQ(c.state.parameters.size(), saved.parameters.size());
    ASSERT_EQ(c.state.buffers.size(), saved.buffers.size());
    ASSERT_EQ(c.state.optimizer_state.size(), saved.optimizer_state.size());
    for (size_t i = 0; i < saved.parameters.size(); ++i) {
      EXPECT_TRUE(torch::equal(c.state.parameters[i], saved.parameters[i])) << i;
      ASSERT_EQ(c.state.optimizer_state[i].size(), 1U) << i;
      EXPECT_TRUE(torch::equal(c.state.optimizer_state[i].at("momentum_buffer"),
                               saved.optimizer_state[i].at("momentum_buffer")))
          << i;
    }
    for (size_t i = 0; i < saved.buffers.size(); ++i) {
      EXPECT_TRUE(torch::equal(c.state.buffers[i], saved.buffers[i])) << i;
    }
  }
}

TEST_F(ResNet18Checkpoint, RefusesWhatDoesNotFitTheModel) {
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no InputError");
  };
  const std::vector<char> bytes = save("");
  // Another scenario's model: its first parameter has another shape.
  const scenarios::ScenarioInstance toy = scenarios::instantiate(registry_.get("toy_cnn"), {0, ""});
  const std::string other = message([&] { parse_checkpoint(bytes, "x.pt", *toy.model.ptr()); });
  EXPECT_NE(other.find("--resume 'x.pt': conv1.weight is Float [64, 3, 7, 7] in the checkpoint"),
            std::string::npos)
      << other;
  // Not a torch.load file at all.
  const std::vector<char> garbage(bytes.begin(), bytes.begin() + 100);
  EXPECT_NE(message([&] {
              parse_checkpoint(garbage, "x.pt", loop_->module());
            }).find("--resume 'x.pt': cannot read it as a torch.load file"),
            std::string::npos)
      << message([&] { parse_checkpoint(garbage, "x.pt", loop_->module()); });
  // A torch.load file that is no checkpoint (a state file).
  EXPECT_NE(message([&] {
              parse_checkpoint(pickle_state(capture_state(loop_->module())), "x.pt",
                               loop_->module());
            }).find("no \"model\" entry"),
            std::string::npos);
}

}  // namespace
}  // namespace ddpbench::modes
