// scenarios_config_refusals_test.cpp — what scenario files and KEY VALUE overrides
// (scenarios/scenario_config.h) refuse, each with the key (and the file and line) named: synthetic
// data described in part or with a loss its targets do not take, unknown keys (with near
// matches), wrong types, unreadable or malformed files, a key set twice, combinations that would
// not mean what they say, optimizer numbers outside torch's domains, and YAML beyond plain values.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "scenarios/scenario_config.h"
#include "support/scenario_config_fixture.h"

namespace ddpbench::scenarios {
namespace {

// Synthetic data is described whole (an input shape and one kind of target), beside no data
// file, with a loss its targets take; the targets pick the loss when none was given.
TEST_F(ScenarioConfig, SyntheticDataIsDescribedWholeWithALossItsTargetsTake) {
  const auto with = [](std::vector<std::string> overrides) {
    return ScenarioSource{"toy_cnn", "", std::move(overrides), {}};
  };
  EXPECT_EQ(
      configure_scenario(registry_, with({"DATA.INPUT_SHAPE", "4", "DATA.TARGET_SHAPE", "2"})).loss,
      LossKind::kMse);
  EXPECT_EQ(configure_scenario(registry_, with({"DATA.INPUT_SHAPE", "4", "DATA.TARGET_SHAPE", "2",
                                                "LOSS.NAME", "rmse"}))
                .loss,
            LossKind::kRmse);
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"DATA.NUM_CLASSES", "3"}, "DATA.NUM_CLASSES (--num-classes) describes synthetic data"},
      {{"DATA.INPUT_DTYPE", "int64"}, "DATA.INPUT_DTYPE (--input-dtype) describes"},
      {{"DATA.SAMPLES", "8"}, "DATA.SAMPLES describes synthetic data"},
      {{"DATA.INPUT_SHAPE", "4"}, "needs one kind of target, and has none"},
      {{"DATA.INPUT_SHAPE", "4", "DATA.NUM_CLASSES", "3", "DATA.TARGET_SHAPE", "2"},
       "needs one kind of target, and has two"},
      {{"DATA.INPUT_SHAPE", "4", "DATA.NUM_CLASSES", "3", "DATA.INPUT_DTYPE", "int64"},
       "add --vocab-size N"},
      {{"DATA.INPUT_SHAPE", "4", "DATA.NUM_CLASSES", "3", "DATA.VOCAB_SIZE", "9"},
       "add --input-dtype int64"},
      {{"DATA.INPUT_SHAPE", "4", "DATA.NUM_CLASSES", "3", "LOSS.NAME", "mse"},
       "LOSS.NAME (--loss) does not fit the synthetic targets"},
      {{"DATA.INPUT_SHAPE", "4", "DATA.TARGET_SHAPE", "3", "LOSS.NAME", "cross_entropy"},
       "regression targets (--target-shape) take mse or rmse"},
      {{"DATA.INPUT_SHAPE", "4", "DATA.NUM_CLASSES", "3", "DATA.FILE", "d.pt"},
       "DATA.FILE (--data) and DATA.INPUT_SHAPE (--input-shape) both name the training data"},
      {{"DATA.INPUT_SHAPE", "4096,4097"}, "is not a shape such as 3,32,32"},
  };
  for (const auto& [overrides, message] : refused) {
    const std::string e = error_of(with(overrides));
    EXPECT_NE(e.find(message), std::string::npos) << e;
  }
}

TEST_F(ScenarioConfig, UnknownKeysAreNamedWithNearMatches) {
  std::string e = file_error("SCENARIO.BASE: toy_cnn\nTRAIN:\n  BATCHSIZE: 4\n");
  EXPECT_NE(e.find("unknown scenario key 'TRAIN.BATCHSIZE'"), std::string::npos) << e;
  EXPECT_NE(e.find("line 3"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean TRAIN.BATCH_SIZE?"), std::string::npos) << e;
  e = error_of({"toy_cnn", "", {"optim.base_lr", "0.1"}});
  EXPECT_NE(e.find("'optim.base_lr' (the command line): did you mean OPTIM.BASE_LR?"),
            std::string::npos)
      << e;
  e = error_of({"toy_cnn", "", {"COLOUR", "red"}});
  EXPECT_NE(e.find("the keys are SCENARIO.BASE and those of sections SCENARIO, TRAIN"),
            std::string::npos)
      << e;
}

TEST_F(ScenarioConfig, WrongTypesNameKeyValueAndType) {
  const auto on_toy = [this](const std::string& key, const std::string& value) {
    return error_of({"toy_cnn", "", {key, value}});
  };
  EXPECT_EQ(on_toy("TRAIN.BATCH_SIZE", "1.5"),
            "scenario key TRAIN.BATCH_SIZE (the command line): '1.5' is not an integer from 1 to "
            "1073741824");
  EXPECT_NE(on_toy("TRAIN.STEPS", "0").find("'0' is not an integer from 1"), std::string::npos);
  EXPECT_NE(on_toy("TRAIN.SHUFFLE", "yes").find("'yes' is not true or false"), std::string::npos);
  EXPECT_NE(on_toy("OPTIM.BASE_LR", "fast").find("'fast' is not a number from 0.0 to 1000.0"),
            std::string::npos);
  EXPECT_NE(on_toy("OPTIM.BASE_LR", "nan").find("OPTIM.BASE_LR"), std::string::npos);
  EXPECT_NE(on_toy("OPTIM.MOMENTUM", "-0.5").find("OPTIM.MOMENTUM"), std::string::npos);
  EXPECT_NE(on_toy("TRAIN.DTYPE", "float16").find("'float16' is not one of float32, float64"),
            std::string::npos);
  EXPECT_NE(on_toy("SCENARIO.NAME", "My Run").find("lower_snake_case"), std::string::npos);
  EXPECT_NE(on_toy("OPTIM.NAME", "lion").find("'lion' is not one of sgd, adam, adamw"),
            std::string::npos);
  EXPECT_NE(on_toy("OPTIM.NO_DECAY", "1d,,bias").find("'1d,,bias' is not none, or a comma list"),
            std::string::npos);
  EXPECT_NE(on_toy("OPTIM.NO_DECAY", "bias*").find("OPTIM.NO_DECAY"), std::string::npos);
  EXPECT_NE(on_toy("SCHED.NAME", "cosine").find("one of constant, step, warmup_cosine, onecycle"),
            std::string::npos);
  EXPECT_NE(on_toy("SCHED.GAMMA", "2").find("a number from 0.0 to 1.0"), std::string::npos);
  const std::string e = file_error("SCENARIO.BASE: toy_cnn\nTRAIN:\n  STEPS: [1, 2]\n");
  EXPECT_NE(e.find("scenario key TRAIN.STEPS ("), std::string::npos) << e;
  EXPECT_NE(e.find("line 3): a list or mapping is not an integer"), std::string::npos) << e;
}

TEST_F(ScenarioConfig, BadFilesAreRefusedWithTheReason) {
  EXPECT_NE(error_of({"", path("absent.yaml"), {}}).find("no such file"), std::string::npos);
  EXPECT_NE(error_of({"", tmp_, {}}).find("is not a regular file"), std::string::npos);
  std::string e = file_error("SCENARIO.BASE: toy_cnn\nTRAIN: [1, 2\nOPTIM: {}\n");
  EXPECT_NE(e.find("YAML syntax error"), std::string::npos) << e;
  EXPECT_NE(e.find(" line 3, column"), std::string::npos) << e;
  EXPECT_NE(file_error("").find("is empty: it needs at least SCENARIO.BASE"), std::string::npos);
  EXPECT_NE(file_error("- a\n- b\n").find("expected a mapping"), std::string::npos);
  e = file_error("TRAIN: {STEPS: 2}\n");
  EXPECT_NE(e.find("does not name its base: add SCENARIO.BASE"), std::string::npos) << e;
  EXPECT_NE(e.find("toy_cnn"), std::string::npos) << e;
  e = file_error("SCENARIO: {BASE: alexnet}\n");
  EXPECT_NE(e.find("SCENARIO.BASE ("), std::string::npos) << e;
  EXPECT_NE(e.find("'alexnet' is not a built-in scenario"), std::string::npos) << e;
}

TEST_F(ScenarioConfig, AKeySetTwiceInOnePlaceIsRefused) {
  std::string e = file_error("SCENARIO.BASE: toy_cnn\nTRAIN:\n  STEPS: 2\nTRAIN.STEPS: 3\n");
  EXPECT_NE(e.find("'TRAIN.STEPS' is set twice in"), std::string::npos) << e;
  EXPECT_NE(e.find("(lines 3 and 4)"), std::string::npos) << e;
  e = file_error("SCENARIO.BASE: toy_cnn\nTRAIN: {STEPS: 2}\nTRAIN: {SEED: 3}\n");
  EXPECT_NE(e.find("'TRAIN' is set twice"), std::string::npos) << e;
  e = error_of({"toy_cnn", "", {"TRAIN.STEPS", "2", "TRAIN.STEPS", "3"}});
  EXPECT_NE(e.find("'TRAIN.STEPS' is given twice on the command line"), std::string::npos) << e;
  e = error_of({"toy_cnn", "", {"TRAIN.STEPS", "2", "TRAIN.SEED"}});
  EXPECT_NE(e.find("KEY VALUE pairs: 'TRAIN.SEED' has no value"), std::string::npos) << e;
  e = error_of({"toy_cnn", "", {"SCENARIO.BASE", "linear_mse"}});
  EXPECT_NE(e.find("SCENARIO.BASE cannot be overridden on the command line"), std::string::npos);
}

TEST_F(ScenarioConfig, CombinationsThatWouldNotMeanWhatTheySayAreRefused) {
  std::string e = error_of({"toy_cnn", "", {"OPTIM.NESTEROV", "true", "OPTIM.MOMENTUM", "0.0"}});
  EXPECT_NE(e.find("OPTIM.NESTEROV true needs OPTIM.MOMENTUM > 0"), std::string::npos) << e;
  EXPECT_NO_THROW(configure_scenario(registry_, {"toy_cnn", "", {"OPTIM.NESTEROV", "true"}}));
  e = error_of({"linear_mse", "", {"LOSS.LABEL_SMOOTHING", "0.1"}});
  EXPECT_NE(e.find("LOSS.LABEL_SMOOTHING 0.1 smooths CrossEntropyLoss's targets, and this "
                   "scenario's loss is mse"),
            std::string::npos)
      << e;
  e = error_of({"toy_cnn", "", {"SCHED.NAME", "onecycle", "SCHED.TOTAL_STEPS", "3"}});
  EXPECT_NE(e.find("SCHED.PCT_START x SCHED.TOTAL_STEPS (0.3 x 3) leaves OneCycleLR a phase of "
                   "no steps"),
            std::string::npos)
      << e;
  e = error_of({"toy_cnn", "", {"SCHED.NAME", "warmup_cosine", "SCHED.WARMUP_STEPS", "5"}});
  EXPECT_NE(e.find("SCHED.DECAY_STEPS (1) must be above SCHED.WARMUP_STEPS (5)"), std::string::npos)
      << e;
  e = error_of({"toy_cnn", "", {"OPTIM.NO_DECAY_LR_SCALE", "0.5"}});
  EXPECT_NE(e.find("OPTIM.NO_DECAY_LR_SCALE 0.5 scales the no-decay parameter group's rate, and "
                   "OPTIM.NO_DECAY makes no such group"),
            std::string::npos)
      << e;
  e = error_of({"toy_cnn", "", {"LOSS.NAME", "mse"}});
  EXPECT_NE(e.find("LOSS.NAME (--loss) does not fit toy_cnn's data"), std::string::npos) << e;
  EXPECT_NO_THROW(configure_scenario(registry_, {"linear_mse", "", {"LOSS.NAME", "rmse"}}));
  e = error_of({"toy_cnn", "", {"TOL.FLOAT32_RTOL", "0.5"}});
  EXPECT_NE(e.find("set TOL.FLOAT32_REASON"), std::string::npos) << e;
  e = error_of({"toy_cnn", "", {"TOL.GRAD_FLOAT64", "0.5"}});
  EXPECT_NE(e.find("set TOL.FLOAT64_REASON"), std::string::npos) << e;
  EXPECT_NO_THROW(configure_scenario(
      registry_, {"toy_cnn", "", {"TOL.FLOAT32_RTOL", "0.5", "TOL.FLOAT32_REASON", "why"}}));
  e = error_of({"toy_cnn", "", {"SCENARIO.NAME", "linear_mse"}});
  EXPECT_NE(e.find("another built-in scenario's name"), std::string::npos) << e;
}

// Defect 12: values the key parser took and libtorch refused inside the workers (exit 3, its
// text): Adam's betas must be below 1, and a learning rate or weight decay past float's range
// failed the Scalar conversion. A nonzero literal that underflows to 0 was taken as 0.
TEST_F(ScenarioConfig, OptimizerNumbersHaveTorchsDomains) {
  const auto on_adam = [this](const std::string& key, const std::string& value) {
    return error_of({"toy_cnn", "", {"OPTIM.NAME", "adam", key, value}});
  };
  EXPECT_NE(on_adam("OPTIM.BETA1", "1")
                .find("'1' is not a number from 0.0 up to, not including, "
                      "1.0"),
            std::string::npos);
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"OPTIM.BETA1", "1.0"},
                                                        {"OPTIM.BETA2", "1"},
                                                        {"OPTIM.BETA2", "-0.1"},
                                                        {"OPTIM.BASE_LR", "1e308"},
                                                        {"OPTIM.BASE_LR", "1e-400"},
                                                        {"OPTIM.WEIGHT_DECAY", "1e300"},
                                                        {"OPTIM.EPS", "1e39"},
                                                        {"OPTIM.EPS", "-1e-8"},
                                                        {"OPTIM.MOMENTUM", "1e10"},
                                                        {"OPTIM.DAMPENING", "-1"},
                                                        {"OPTIM.CLIP_GRAD_NORM", "1e300"},
                                                        {"TOL.FLOAT32_RTOL", "1e-999"}}) {
    EXPECT_NE(on_adam(key, value).find("scenario key " + key), std::string::npos) << key << value;
  }
  // The edges torch accepts are accepted.
  const ScenarioSpec spec = configure_scenario(
      registry_, {"toy_cnn",
                  "",
                  {"OPTIM.NAME", "adam", "OPTIM.BETA1", "0", "OPTIM.BETA2", "0.999999", "OPTIM.EPS",
                   "0", "OPTIM.BASE_LR", "0", "OPTIM.WEIGHT_DECAY", "0"}});
  EXPECT_EQ(spec.optimizer.beta2, 0.999999);
  EXPECT_EQ(spec.optimizer.lr, 0.0);
}

// Defect 4 and its minor relatives: anchors and aliases (a "billion laughs" hung the key walk),
// tags and a second document (both silently ignored) are refused with the file and line.
TEST_F(ScenarioConfig, OnlyPlainYamlIsRead) {
  std::string e = file_error("SCENARIO.BASE: toy_cnn\nsteps: &s {STEPS: 2}\nTRAIN: *s\n");
  EXPECT_NE(e.find("s.yaml' line 2: YAML anchors and aliases"), std::string::npos) << e;
  e = file_error("SCENARIO.BASE: toy_cnn\nTRAIN:\n  STEPS: !foo 2\n");
  EXPECT_NE(e.find("s.yaml' line 3: YAML tag '!foo'"), std::string::npos) << e;
  e = file_error("SCENARIO.BASE: toy_cnn\nTRAIN: !!map {STEPS: 2}\n");
  EXPECT_NE(e.find("line 2: YAML tag"), std::string::npos) << e;
  e = file_error("SCENARIO.BASE: toy_cnn\n---\nTRAIN.STEPS: 3\n");
  EXPECT_NE(e.find("s.yaml' line 2: a second YAML document"), std::string::npos) << e;
  // Quoted values stay plain values.
  EXPECT_EQ(from_file(write("q.yaml", "SCENARIO.BASE: 'toy_cnn'\nTRAIN: {STEPS: \"3\"}\n")).steps,
            3);
}

}  // namespace
}  // namespace ddpbench::scenarios
