// modes_checkpoint_test.cpp — checkpoints (checkpoint/checkpoint.h) against PyTorch: a
// cifar_resnet18 checkpoint, bare or with DDP's "module." keys, loads into
// torchvision.models.resnet18(num_classes=10) with strict=True and its optimizer part into
// torch.optim.SGD (reference/checkpoint_oracle.py), and torchvision then computes the logits
// ddpbench's model computes from the same state — a doctored logit fails the oracle. Reading back
// gives what was saved, in either key form; a file that does not fit the model is refused, as is
// optimizer state its optimizer would not keep (another optimizer's, a bad Adam step) and NaN or
// infinity in any tensor.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>

#include "checkpoint/checkpoint.h"
#include "errors.h"
#include "modes/common/model_state.h"
#include "modes/common/step_loop.h"
#include "modes/single/single_path.h"
#include "runtime/execution_context.h"
#include "scenarios/registry.h"
#include "scenarios/training_recipe.h"
#include "support/subprocess.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench::modes {
namespace {
// The checkpoint format is its own layer (harness/checkpoint/); the states it saves are modes'.
using namespace ::ddpbench::checkpoint;

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
    const Checkpoint c =
        parse_checkpoint(save(prefix), "ckpt.pt", loop_->module(), spec_.optimizer);
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
  // Another scenario's model: its records are larger than toy_cnn's tensors, and check_meta sees
  // the file's run before they are bounded (--resume names the scenario to pass).
  const scenarios::ScenarioInstance toy = scenarios::instantiate(registry_.get("toy_cnn"), {0, ""});
  const std::string other =
      message([&] { parse_checkpoint(bytes, "x.pt", *toy.model.ptr(), spec_.optimizer); });
  EXPECT_NE(other.find("--resume 'x.pt': its record 'archive/data/"), std::string::npos) << other;
  EXPECT_NE(other.find("more than any tensor of this scenario's model can"), std::string::npos)
      << other;
  std::string seen;
  message([&] {
    parse_checkpoint(bytes, "x.pt", *toy.model.ptr(), spec_.optimizer,
                     [&](const CheckpointMeta& m) { seen = m.scenario; });
  });
  EXPECT_EQ(seen, "cifar_resnet18");
  // Not a torch.load file at all.
  const std::vector<char> garbage(bytes.begin(), bytes.begin() + 100);
  EXPECT_NE(message([&] {
              parse_checkpoint(garbage, "x.pt", loop_->module(), spec_.optimizer);
            }).find("--resume 'x.pt': cannot read it as a torch.load file"),
            std::string::npos)
      << message([&] { parse_checkpoint(garbage, "x.pt", loop_->module(), spec_.optimizer); });
  // A torch.load file that is no checkpoint (a state file).
  EXPECT_NE(message([&] {
              parse_checkpoint(pickle_state(capture_state(loop_->module())), "x.pt",
                               loop_->module(), spec_.optimizer);
            }).find("no \"model\" entry"),
            std::string::npos);
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no InputError";
}

// A Linear(4, 3) after one step of an optimizer, its checkpoint as the dict torch.load gives (to
// doctor in place: GenericDicts share their contents) and back as a file.
class SmallCheckpoint : public ::testing::Test {
 protected:
  static scenarios::OptimizerSpec adam() {
    scenarios::OptimizerSpec s;
    s.kind = scenarios::OptimizerKind::kAdam;
    return s;
  }
  static scenarios::OptimizerSpec sgd() {
    scenarios::OptimizerSpec s;
    s.momentum = 0.9;
    return s;
  }

  c10::IValue saved(const scenarios::OptimizerSpec& spec) {
    auto optimizer = scenarios::make_optimizer(spec, model_->parameters());
    optimizer->zero_grad();
    model_->forward(torch::ones({2, 4})).sum().backward();
    optimizer->step();
    const CheckpointMeta meta{"x", "single", 0, 1, 2, "float32", 1, 0};
    return torch::pickle_load(checkpoint_bytes(*model_, *optimizer, spec, meta, ""));
  }
  // The optimizer state of parameter 0 (weight).
  static c10::impl::GenericDict weight_state(const c10::IValue& ckpt) {
    return ckpt.toGenericDict()
        .at("optimizer")
        .toGenericDict()
        .at("state")
        .toGenericDict()
        .at(int64_t{0})
        .toGenericDict();
  }
  std::string refused(const c10::IValue& ckpt, const scenarios::OptimizerSpec& spec) {
    return refusal([&] { parse_checkpoint(pickle_for_torch_load(ckpt), "x.pt", *model_, spec); });
  }

  torch::nn::Linear model_{4, 3};
};

// Another optimizer's state, or a damaged one, is refused at load (exit 2), not when the
// optimizer takes it (an internal error, exit 3, before).
TEST_F(SmallCheckpoint, RefusesStateItsOptimizerWouldNotKeep) {
  EXPECT_EQ(refused(saved(adam()), adam()), "no InputError");
  EXPECT_NE(refused(saved(adam()), sgd())
                .find("--resume 'x.pt': the optimizer state of weight has 'exp_avg', which SGD "
                      "with momentum does not keep (it keeps momentum_buffer): pass a checkpoint "
                      "of a run with this run's optimizer"),
            std::string::npos)
      << refused(saved(adam()), sgd());
  EXPECT_NE(refused(saved(sgd()), adam())
                .find("the optimizer state of weight has 'momentum_buffer', which Adam does not "
                      "keep (it keeps step, exp_avg, exp_avg_sq)"),
            std::string::npos)
      << refused(saved(sgd()), adam());
  scenarios::OptimizerSpec plain_sgd;  // no momentum: no state at all
  EXPECT_NE(refused(saved(sgd()), plain_sgd)
                .find("which SGD without momentum does not keep (it "
                      "keeps none)"),
            std::string::npos);

  c10::IValue ckpt = saved(adam());
  weight_state(ckpt).insert_or_assign("velocity", torch::zeros({3, 4}));
  EXPECT_NE(refused(ckpt, adam()).find("has 'velocity', which Adam does not keep"),
            std::string::npos)
      << refused(ckpt, adam());
  ckpt = saved(adam());
  ASSERT_EQ(weight_state(ckpt).erase("exp_avg_sq"), 1U);
  EXPECT_NE(refused(ckpt, adam())
                .find("the optimizer state of weight lacks exp_avg_sq, which "
                      "Adam keeps"),
            std::string::npos)
      << refused(ckpt, adam());
  for (const auto& [step, shown] :
       std::vector<std::pair<at::Tensor, std::string>>{{torch::zeros({0}), "Float [0]"},
                                                       {torch::zeros({3}), "Float [3]"},
                                                       {torch::scalar_tensor(0.0), "0"},
                                                       {torch::scalar_tensor(2.0), "2"},
                                                       {torch::scalar_tensor(0.5), "0.5"}}) {
    ckpt = saved(adam());
    weight_state(ckpt).insert_or_assign("step", step);
    EXPECT_NE(refused(ckpt, adam())
                  .find("Adam's step of weight is " + shown +
                        ", and after the checkpoint's 1 steps it is one whole number from 1 to 1"),
              std::string::npos)
        << refused(ckpt, adam());
  }
}

// NaN or infinity anywhere is refused at load, naming the tensor (before, the run failed steps
// later as a worker failure, exit 3).
TEST_F(SmallCheckpoint, RefusesNonFiniteTensors) {
  c10::IValue ckpt = saved(adam());
  ckpt.toGenericDict().at("model").toGenericDict().at("bias").toTensor()[1] = INFINITY;
  EXPECT_NE(refused(ckpt, adam()).find("--resume 'x.pt': bias holds NaN or infinite values"),
            std::string::npos)
      << refused(ckpt, adam());
  ckpt = saved(adam());
  weight_state(ckpt).insert_or_assign("step", torch::scalar_tensor(NAN));
  EXPECT_NE(refused(ckpt, adam()).find("the optimizer's step of weight holds NaN"),
            std::string::npos)
      << refused(ckpt, adam());
  ckpt = saved(adam());
  weight_state(ckpt).at("exp_avg_sq").toTensor()[0][0] = NAN;
  EXPECT_NE(refused(ckpt, adam()).find("the optimizer's exp_avg_sq of weight holds NaN"),
            std::string::npos)
      << refused(ckpt, adam());
}

}  // namespace
}  // namespace ddpbench::modes
