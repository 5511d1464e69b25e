// scenarios_config_test.cpp — scenario files and KEY VALUE overrides (scenarios/scenario_config.h):
// every built-in written by `list --yaml` reads back to the same spec, every key of the table is
// written, every key round-trips a value other than its built-in's, and the file, the overrides
// and the flags apply in their documented order. Each kind of bad input is refused with the key
// named: scenarios_config_refusals_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <tuple>

#include "scenarios/registry.h"
#include "scenarios/scenario_config.h"
#include "scenarios/scenario_keys.h"
#include "support/scenario_config_fixture.h"

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
      s.optimizer.beta2, s.optimizer.eps, s.clip_grad_norm, s.eval_size, s.eval_batch, s.model_file,
      s.data_file, s.synthetic.input_shape, s.synthetic.input_dtype, s.synthetic.vocab_size,
      s.synthetic.num_classes, s.synthetic.target_shape, s.synthetic.samples, s.amp,
      s.grad_scaler.init_scale, s.grad_scaler.growth_interval, s.optimizer.no_decay,
      s.optimizer.schedule.kind, s.optimizer.schedule.step_size, s.optimizer.schedule.gamma,
      s.optimizer.schedule.warmup_steps, s.optimizer.schedule.decay_steps,
      s.optimizer.schedule.min_lr, s.label_smoothing, s.optimizer.schedule.total_steps,
      s.optimizer.schedule.pct_start, s.channels_last);
}

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
          {"MODEL.CHANNELS_LAST", "true"},
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
      {{"OPTIM.NAME", "adamw"},
       {"OPTIM.NO_DECAY", "1d,bias,ln_f.weight"},
       {"OPTIM.NO_DECAY_LR_SCALE", "0.5"},
       {"SCHED.NAME", "warmup_cosine"},
       {"SCHED.WARMUP_STEPS", "2"},
       {"SCHED.DECAY_STEPS", "10"},
       {"SCHED.MIN_LR", "0.001"}},
      {{"SCHED.NAME", "step"}, {"SCHED.STEP_SIZE", "3"}, {"SCHED.GAMMA", "0.5"}},
      {{"SCHED.NAME", "onecycle"}, {"SCHED.TOTAL_STEPS", "40"}, {"SCHED.PCT_START", "0.25"}},
      {{"DATA.INPUT_SHAPE", "4"}, {"DATA.NUM_CLASSES", "5"}, {"LOSS.LABEL_SMOOTHING", "0.1"}},
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
  want.optimizer.kind = OptimizerKind::kAdamW;
  want.optimizer.no_decay = {"1d", "bias"};
  want.optimizer.schedule = {ScheduleKind::kWarmupCosine, 4, 0.5, 2, 9, 1e-3};
  EXPECT_EQ(
      fields(configure_scenario(registry_, {"linear_mse",
                                            "",
                                            {"OPTIM.NAME", "adamw", "OPTIM.NO_DECAY", "1d,bias",
                                             "SCHED.NAME", "warmup_cosine", "SCHED.STEP_SIZE", "4",
                                             "SCHED.GAMMA", "0.5", "SCHED.WARMUP_STEPS", "2",
                                             "SCHED.DECAY_STEPS", "9", "SCHED.MIN_LR", "1e-3"}})),
      fields(want));
  want = registry_.get("linear_mse");
  want.model_file = "/m/net.pt";
  want.synthetic = {{3, 4}, "int64", 9, 0, {2}, 64};
  EXPECT_EQ(
      fields(configure_scenario(registry_, {"linear_mse",
                                            "",
                                            {"MODEL.FILE", "/m/net.pt", "DATA.INPUT_SHAPE", "3,4",
                                             "DATA.INPUT_DTYPE", "int64", "DATA.VOCAB_SIZE", "9",
                                             "DATA.TARGET_SHAPE", "2", "DATA.SAMPLES", "64"}})),
      fields(want));
  want = registry_.get("linear_mse");
  want.synthetic = {{5}, "float32", 0, 3, {}, 1024};
  want.loss = LossKind::kCrossEntropy;  // the class labels' loss
  EXPECT_EQ(fields(configure_scenario(
                registry_, {"linear_mse", "", {"DATA.INPUT_SHAPE", "5", "DATA.NUM_CLASSES", "3"}})),
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

TEST_F(ScenarioConfig, KeysTextListsEveryKey) {
  const std::string text = scenario_keys_text();
  EXPECT_NE(text.find("SCENARIO.BASE "), std::string::npos);
  for (const ScenarioKey& k : scenario_keys()) {
    EXPECT_NE(text.find(k.name + " "), std::string::npos) << k.name;
    EXPECT_NE(text.find(k.type), std::string::npos) << k.name;
  }
}

}  // namespace
}  // namespace ddpbench::scenarios
