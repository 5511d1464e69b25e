// scenarios_config_test.cpp — scenario files and KEY VALUE overrides (scenarios/scenario_config.h):
// every built-in written by `list --yaml` reads back to the same spec, every key of the table is
// written, every key round-trips a value other than its built-in's, the file and overrides apply
// in their documented order, and each kind of bad input is refused with the key named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "errors.h"
#include "scenarios/registry.h"
#include "scenarios/scenario_config.h"
#include "scenarios/scenario_keys.h"
#include "support/temp_dir_test.h"

namespace ddpbench::scenarios {
namespace {

// Every data field of a spec (the code fields, build_model and build_dataset, come from the base).
auto fields(const ScenarioSpec& s) {
  const Tolerances& t = s.tolerances;
  return std::make_tuple(
      s.name, s.summary, s.model_name, s.dataset_name, s.global_batch, s.steps, s.seed, s.dtype,
      s.shuffle, s.sampler_drop_last, s.loss, s.optimizer.lr, s.optimizer.momentum,
      s.optimizer.dampening, s.optimizer.weight_decay, s.optimizer.nesterov, t.float32.rtol,
      t.float32.atol, t.float32.reason, t.float64.rtol, t.float64.atol, t.float64.reason,
      t.gradient_float32, t.gradient_float64, s.divergences.size(), s.torch_oracle_model, s.sync_bn,
      s.reads_data_dir, s.accumulation_steps, s.optimizer.kind, s.optimizer.beta1,
      s.optimizer.beta2, s.optimizer.eps, s.clip_grad_norm, s.eval_size, s.eval_batch,
      s.model_file, s.data_file, s.synthetic.input_shape, s.synthetic.input_dtype,
      s.synthetic.vocab_size, s.synthetic.num_classes, s.synthetic.target_shape,
      s.synthetic.samples, s.amp, s.grad_scaler.init_scale, s.grad_scaler.growth_interval);
}

class ScenarioConfig : public testing::TempDirTest {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = path(name);
    std::ofstream(p) << text;
    return p;
  }
  ScenarioSpec from_file(const std::string& file, std::vector<std::string> overrides = {}) {
    return configure_scenario(registry_, {"", file, std::move(overrides)});
  }
  // The InputError's message, or a failure when none is thrown.
  std::string error_of(const ScenarioSource& source) {
    try {
      configure_scenario(registry_, source);
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "no InputError for --config " << source.config;
    return "";
  }
  std::string file_error(const std::string& text, std::vector<std::string> overrides = {}) {
    return error_of({"", write("s.yaml", text), std::move(overrides)});
  }
  const ScenarioRegistry registry_ = builtin_registry();
};

TEST_F(ScenarioConfig, EveryBuiltinReadsBackFromItsYaml) {
  for (const ScenarioSpec& builtin : registry_.all()) {
    SCOPED_TRACE(builtin.name);
    const std::string yaml = scenario_yaml(builtin);
    const ScenarioSpec back = from_file(write(builtin.name + ".yaml", yaml));
    EXPECT_EQ(fields(back), fields(builtin));
    EXPECT_EQ(back.base, builtin.name);
    EXPECT_EQ(back.configured_by, "--config " + path(builtin.name + ".yaml"));
    // Every key of the table is written, under its section, with the value the spec holds.
    EXPECT_NE(yaml.find("SCENARIO:\n  BASE: " + builtin.name), std::string::npos) << yaml;
    for (const ScenarioKey& k : scenario_keys()) {
      const std::string section = key_section(k.name);
      const size_t at = yaml.find("\n" + section + ":\n");
      ASSERT_NE(at, std::string::npos) << k.name;
      const std::string line = "\n  " + k.name.substr(section.size() + 1) + ": ";
      const size_t key_at = yaml.find(line, at);
      ASSERT_NE(key_at, std::string::npos) << k.name << " missing:\n" << yaml;
      if (k.type.rfind("an integer", 0) == 0 || k.type.rfind("a finite", 0) == 0) {
        EXPECT_EQ(yaml.compare(key_at + line.size(), k.get(builtin).size(), k.get(builtin)), 0)
            << k.name;
      }
    }
  }
}

// A value other than the built-in's for every key: a getter and setter that disagree, or a key
// `list --yaml` forgets to write, cannot pass. A new key needs a value here (the test says so).
TEST_F(ScenarioConfig, EveryKeyRoundTripsAChangedValue) {
  // Two configurations, since Nesterov momentum refuses a dampening.
  const std::vector<std::vector<std::pair<std::string, std::string>>> groups = {
      {
          {"SCENARIO.NAME", "my_linear"},
          {"SCENARIO.SUMMARY", "a summary: with # and 'quotes'"},
          {"TRAIN.BATCH_SIZE", "4"},
          {"TRAIN.STEPS", "3"},
          {"TRAIN.SEED", "7"},
          {"TRAIN.DTYPE", "float64"},
          {"TRAIN.SHUFFLE", "true"},
          {"TRAIN.DROP_LAST", "true"},
          {"LOSS.NAME", "rmse"},
          {"OPTIM.BASE_LR", "0.1"},
          {"OPTIM.MOMENTUM", "0.9"},
          {"OPTIM.WEIGHT_DECAY", "1e-4"},
          {"OPTIM.NESTEROV", "true"},
          {"MODEL.SYNC_BN", "true"},
          {"TOL.FLOAT32_RTOL", "1e-5"},
          {"TOL.FLOAT32_ATOL", "2e-5"},
          {"TOL.FLOAT32_REASON", "measured: 3e-6 over 10 runs"},
          {"TOL.FLOAT64_RTOL", "1e-9"},
          {"TOL.FLOAT64_ATOL", "1e-11"},
          {"TOL.FLOAT64_REASON", "measured"},
          {"TOL.GRAD_FLOAT32", "1e-4"},
          {"TOL.GRAD_FLOAT64", "1e-10"},
          {"TRAIN.ACCUMULATION_STEPS", "2"},
          {"OPTIM.BETA1", "0.8"},
          {"OPTIM.BETA2", "0.99"},
          {"OPTIM.EPS", "1e-6"},
          {"OPTIM.CLIP_GRAD_NORM", "0.5"},
          {"EVAL.SIZE", "100"},
          {"EVAL.BATCH_SIZE", "16"},
      },
      {{"OPTIM.DAMPENING", "0.25"}, {"OPTIM.NAME", "adam"}},
      // Paths are absolute here: `list --yaml` writes them so.
      {{"MODEL.FILE", "/models/net.pt"},
       {"DATA.INPUT_SHAPE", "3,4"},
       {"DATA.INPUT_DTYPE", "int64"},
       {"DATA.VOCAB_SIZE", "9"},
       {"DATA.TARGET_SHAPE", "2"},
       {"DATA.SAMPLES", "64"}},
      {{"DATA.INPUT_SHAPE", "5"}, {"DATA.NUM_CLASSES", "3"}},
      {{"DATA.FILE", "/data/d.pt"}},
      {{"TRAIN.AMP", "fp16"},
       {"TRAIN.GRAD_SCALER_INIT", "1024"},
       {"TRAIN.GRAD_SCALER_GROWTH_INTERVAL", "100"}},
  };
  const ScenarioSpec& base = registry_.get("linear_mse");
  std::set<std::string> covered;
  for (const auto& changed : groups) {
    std::vector<std::string> overrides;
    for (const auto& [key, value] : changed) {
      overrides.insert(overrides.end(), {key, value});
      covered.insert(key);
    }
    const ScenarioSpec configured = configure_scenario(registry_, {"linear_mse", "", overrides});
    for (const auto& [key, value] : changed) {
      const ScenarioKey& k = *find_scenario_key(key);
      EXPECT_NE(k.get(configured), k.get(base)) << key << " kept the built-in's value";
    }
    const ScenarioSpec back = from_file(write("changed.yaml", scenario_yaml(configured)));
    EXPECT_EQ(fields(back), fields(configured));
    EXPECT_EQ(back.base, "linear_mse");
  }
  for (const ScenarioKey& k : scenario_keys()) {
    EXPECT_TRUE(covered.count(k.name)) << "add a changed value for " << k.name << " to this test";
  }
}

// Each key sets its own field, written out here by hand rather than through the table: a row
// whose getter and setter both point at the wrong field round-trips, and is caught here.
TEST_F(ScenarioConfig, EachKeySetsItsOwnField) {
  ScenarioSpec want = registry_.get("linear_mse");
  want.name = "n";
  want.summary = "s";
  want.global_batch = 4;
  want.steps = 3;
  want.seed = 7;
  want.dtype = "float64";
  want.shuffle = true;
  want.sampler_drop_last = true;
  want.loss = LossKind::kRmse;
  want.optimizer = {0.1, 0.9, 0.0, 1e-4, true};
  want.sync_bn = true;
  want.tolerances.float32 = {1e-5, 2e-5, "r32"};
  want.tolerances.float64 = {1e-9, 1e-11, "r64"};
  want.tolerances.gradient_float32 = 1e-4;
  want.tolerances.gradient_float64 = 1e-10;
  const ScenarioSpec got = configure_scenario(
      registry_,
      {"linear_mse",
       "",
       {"SCENARIO.NAME",    "n",     "SCENARIO.SUMMARY",   "s",    "TRAIN.BATCH_SIZE",   "4",
        "TRAIN.STEPS",      "3",     "TRAIN.SEED",         "7",    "TRAIN.DTYPE",        "float64",
        "TRAIN.SHUFFLE",    "true",  "TRAIN.DROP_LAST",    "true", "LOSS.NAME",          "rmse",
        "OPTIM.BASE_LR",    "0.1",   "OPTIM.MOMENTUM",     "0.9",  "OPTIM.WEIGHT_DECAY", "1e-4",
        "OPTIM.NESTEROV",   "true",  "MODEL.SYNC_BN",      "true", "TOL.FLOAT32_RTOL",   "1e-5",
        "TOL.FLOAT32_ATOL", "2e-5",  "TOL.FLOAT32_REASON", "r32",  "TOL.FLOAT64_RTOL",   "1e-9",
        "TOL.FLOAT64_ATOL", "1e-11", "TOL.FLOAT64_REASON", "r64",  "TOL.GRAD_FLOAT32",   "1e-4",
        "TOL.GRAD_FLOAT64", "1e-10"}});
  EXPECT_EQ(fields(got), fields(want));
  want = registry_.get("linear_mse");
  want.optimizer.dampening = 0.25;
  EXPECT_EQ(fields(configure_scenario(registry_, {"linear_mse", "", {"OPTIM.DAMPENING", "0.25"}})),
            fields(want));
  want = registry_.get("linear_mse");
  want.accumulation_steps = 2;
  want.optimizer.kind = OptimizerKind::kAdam;
  want.optimizer.beta1 = 0.8;
  want.optimizer.beta2 = 0.99;
  want.optimizer.eps = 1e-6;
  want.clip_grad_norm = 0.5;
  want.eval_size = 100;
  want.eval_batch = 16;
  EXPECT_EQ(
      fields(configure_scenario(
          registry_, {"linear_mse",
                      "",
                      {"TRAIN.ACCUMULATION_STEPS", "2", "OPTIM.NAME", "adam", "OPTIM.BETA1", "0.8",
                       "OPTIM.BETA2", "0.99", "OPTIM.EPS", "1e-6", "OPTIM.CLIP_GRAD_NORM", "0.5",
                       "EVAL.SIZE", "100", "EVAL.BATCH_SIZE", "16"}})),
      fields(want));
  want = registry_.get("linear_mse");
  want.model_file = "/m/net.pt";
  want.synthetic = {{3, 4}, "int64", 9, 0, {2}, 64};
  EXPECT_EQ(fields(configure_scenario(
                registry_, {"linear_mse",
                            "",
                            {"MODEL.FILE", "/m/net.pt", "DATA.INPUT_SHAPE", "3,4",
                             "DATA.INPUT_DTYPE", "int64", "DATA.VOCAB_SIZE", "9",
                             "DATA.TARGET_SHAPE", "2", "DATA.SAMPLES", "64"}})),
            fields(want));
  want = registry_.get("linear_mse");
  want.synthetic = {{5}, "float32", 0, 3, {}, 1024};
  want.loss = LossKind::kCrossEntropy;  // the class labels' loss
  EXPECT_EQ(fields(configure_scenario(registry_, {"linear_mse",
                                                  "",
                                                  {"DATA.INPUT_SHAPE", "5", "DATA.NUM_CLASSES", "3"}})),
            fields(want));
  want = registry_.get("linear_mse");
  want.data_file = "d.pt";
  EXPECT_EQ(fields(configure_scenario(registry_, {"linear_mse", "", {"DATA.FILE", "d.pt"}})),
            fields(want));
  // none clears an optional number.
  want = registry_.get("imdb_gcnn");
  want.clip_grad_norm.reset();
  EXPECT_EQ(
      fields(configure_scenario(registry_, {"imdb_gcnn", "", {"OPTIM.CLIP_GRAD_NORM", "none"}})),
      fields(want));
}

TEST_F(ScenarioConfig, OverridesBeatTheFileWhichBeatsTheBase) {
  const std::string file = write("f.yaml",
                                 "SCENARIO: {BASE: toy_cnn}\n"
                                 "TRAIN:\n  BATCH_SIZE: 32\n  STEPS: 5\n"
                                 "OPTIM.BASE_LR: 0.5\n");
  const ScenarioSpec s = from_file(file, {"TRAIN.STEPS", "2", "TRAIN.SEED", "9"});
  const ScenarioSpec& base = registry_.get("toy_cnn");
  EXPECT_EQ(s.global_batch, 32);  // the file
  EXPECT_EQ(s.steps, 2);          // the override over the file
  EXPECT_EQ(s.seed, 9);           // the override over the base
  EXPECT_EQ(s.optimizer.lr, 0.5);
  EXPECT_EQ(s.optimizer.momentum, base.optimizer.momentum);  // the base
  EXPECT_EQ(s.name, "toy_cnn");
  EXPECT_EQ(s.configured_by, "--config " + file + " TRAIN.STEPS 2 TRAIN.SEED 9");
  // Overrides on a built-in, without a file.
  const ScenarioSpec o = configure_scenario(registry_, {"toy_cnn", "", {"TRAIN.BATCH_SIZE", "8"}});
  EXPECT_EQ(o.global_batch, 8);
  EXPECT_EQ(o.base, "toy_cnn");
  // Nothing configured: the built-in itself.
  const ScenarioSpec plain = configure_scenario(registry_, {"toy_cnn", "", {}});
  EXPECT_EQ(fields(plain), fields(base));
  EXPECT_TRUE(plain.configured_by.empty());
}

// --model, --data, --input-shape, --loss ... set their keys last (the flags win), and a relative
// path in a file is the file's neighbour wherever the run starts.
TEST_F(ScenarioConfig, FlagsBeatKeysAndAFilesPathsAreRelativeToIt) {
  std::filesystem::create_directories(path("sub"));
  const std::string file = write(
      "sub/f.yaml", "SCENARIO: {BASE: toy_cnn}\nMODEL: {FILE: net.pt}\nDATA:\n  FILE: ../d.pt\n");
  ScenarioSpec s = from_file(file);
  EXPECT_EQ(s.model_file, path("sub/net.pt"));
  EXPECT_EQ(s.data_file, path("d.pt"));
  EXPECT_NE(scenario_yaml(s).find("FILE: " + path("sub/net.pt")), std::string::npos);
  ScenarioSource source{"", file, {"MODEL.FILE", "over.pt"}, {}};
  EXPECT_EQ(configure_scenario(registry_, source).model_file, "over.pt");  // cwd-relative
  source.flags = {{"--model", "MODEL.FILE", "flag.pt"}};
  s = configure_scenario(registry_, source);
  EXPECT_EQ(s.model_file, "flag.pt");
  EXPECT_EQ(s.configured_by, "--config " + file + " --model flag.pt MODEL.FILE over.pt");
  // A flag alone configures the built-in.
  s = configure_scenario(registry_, {"toy_cnn", "", {}, {{"--loss", "LOSS.NAME", "bce_one_hot"}}});
  EXPECT_EQ(s.loss, LossKind::kBceOneHot);
  EXPECT_EQ(s.base, "toy_cnn");
  const std::string e =
      error_of({"toy_cnn", "", {}, {{"--input-shape", "DATA.INPUT_SHAPE", "3,0"}}});
  EXPECT_NE(e.find("scenario key DATA.INPUT_SHAPE (--input-shape): '3,0' is not a shape"),
            std::string::npos)
      << e;
}

// Synthetic data is described whole (an input shape and one kind of target), beside no data
// file, with a loss its targets take; the targets pick the loss when none was given.
TEST_F(ScenarioConfig, SyntheticDataIsDescribedWholeWithALossItsTargetsTake) {
  const auto with = [](std::vector<std::string> overrides) {
    return ScenarioSource{"toy_cnn", "", std::move(overrides), {}};
  };
  EXPECT_EQ(configure_scenario(registry_, with({"DATA.INPUT_SHAPE", "4", "DATA.TARGET_SHAPE",
                                                "2"}))
                .loss,
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

TEST_F(ScenarioConfig, KeysTextListsEveryKey) {
  const std::string text = scenario_keys_text();
  EXPECT_NE(text.find("SCENARIO.BASE "), std::string::npos);
  for (const ScenarioKey& k : scenario_keys()) {
    EXPECT_NE(text.find(k.name + " "), std::string::npos) << k.name;
    EXPECT_NE(text.find(k.type), std::string::npos) << k.name;
  }
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
