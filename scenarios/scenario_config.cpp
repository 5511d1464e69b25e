// scenario_config.cpp — see scenario_config.h. Sections: reading a file and the overrides into
// key assignments, applying them through the key table, the checks across keys, writing a spec
// back as a file.
#include "scenarios/scenario_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>

#include "errors.h"
#include "quoted_input.h"
#include "scenarios/plain_yaml.h"
#include "scenarios/scenario_keys.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::scenarios {
namespace {

// One KEY = VALUE from the file or the command line, with where it came from for the error line.
struct Assignment {
  std::string key;
  std::string value;
  std::string where;   // "f.yaml line 3" or "the command line"
  bool scalar = true;  // false: a list or a mapping where a value belongs
};

// ---------------------------------------------------------------------------------------------
// Reading

std::string file_where(const std::string& path, const YAML::Mark& mark) {
  return fmt::format("{} line {}", quoted_input(path), mark.line + 1);
}

// Sections nest (TRAIN: {BATCH_SIZE: 16}, as yacs writes them) or are spelled out in the key
// (TRAIN.BATCH_SIZE: 16); both flatten to the same key, so setting one key both ways is caught
// as a key set twice. yaml-cpp keeps every entry of a repeated key, so that is checked here too.
void flatten(const YAML::Node& map, const std::string& prefix, const std::string& path,
             std::map<std::string, int>& seen, std::vector<Assignment>& out) {
  for (const auto& kv : map) {
    const std::string where = file_where(path, kv.first.Mark());
    if (!kv.first.IsScalar()) {
      throw InputError(fmt::format("--config {}: a key must be a name such as TRAIN.STEPS", where));
    }
    const std::string key = prefix + kv.first.Scalar();
    const int line = kv.first.Mark().line + 1;
    const auto [it, fresh] = seen.emplace(key, line);
    if (!fresh) {
      throw InputError(fmt::format("{} is set twice in {} (lines {} and {}): set each key once",
                                   quoted_input(key), quoted_input(path), it->second, line));
    }
    if (kv.second.IsMap()) {
      flatten(kv.second, key + ".", path, seen, out);
    } else {
      out.push_back({key, kv.second.IsScalar() ? kv.second.Scalar() : std::string(), where,
                     kv.second.IsScalar() || kv.second.IsNull()});
    }
  }
}

std::vector<Assignment> read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(fmt::format(
        "--config {}: {}; pass a scenario file (`ddpbench list --yaml toy_cnn` prints one)",
        quoted_input(path),
        std::filesystem::exists(path, ec) ? "is not a regular file" : "no such file"));
  }
  const YAML::Node doc = load_plain_yaml(path, "--config");
  if (doc.IsNull()) {
    throw InputError(
        fmt::format("--config {} is empty: it needs at least {}", quoted_input(path), kBaseKey));
  }
  if (!doc.IsMap()) {
    throw InputError(fmt::format(
        "--config {}: expected a mapping of keys such as TRAIN: {{STEPS: 2}}", quoted_input(path)));
  }
  std::map<std::string, int> seen;
  std::vector<Assignment> out;
  flatten(doc, "", path, seen, out);
  return out;
}

std::vector<Assignment> read_overrides(const std::vector<std::string>& words) {
  if (words.size() % 2 != 0) {
    throw InputError(fmt::format(
        "scenario overrides come in KEY VALUE pairs: {} has no value (e.g. TRAIN.STEPS 2)",
        quoted_input(words.back())));
  }
  std::vector<Assignment> out;
  std::set<std::string> seen;
  for (size_t i = 0; i < words.size(); i += 2) {
    const std::string& key = words[i];
    if (!seen.insert(key).second) {
      throw InputError(fmt::format("{} is given twice on the command line: give each override once",
                                   quoted_input(key)));
    }
    if (key == kBaseKey) {
      throw InputError(fmt::format(
          "{} cannot be overridden on the command line: pass --scenario NAME, or set it in the "
          "--config file",
          kBaseKey));
    }
    out.push_back({key, words[i + 1], "the command line", true});
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Applying

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// Keys a typo probably meant: a few edits away (case aside), or the same field in another section.
std::string unknown_key_message(const Assignment& a) {
  std::vector<std::pair<size_t, std::string>> scored;
  std::vector<std::string> sections;
  const std::string wanted = upper(a.key);
  const std::string leaf = wanted.substr(wanted.find('.') + 1);
  for (const ScenarioKey& k : scenario_keys()) {
    const std::string k_leaf = k.name.substr(k.name.find('.') + 1);
    const size_t distance = edit_distance(wanted, k.name);
    if (distance <= 2 + k.name.size() / 8 || leaf == k_leaf) scored.emplace_back(distance, k.name);
    const std::string section = key_section(k.name);
    if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
      sections.push_back(section);
    }
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> near;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) near.push_back(scored[i].second);
  const std::string hint = near.empty() ? fmt::format("the keys are {} and those of sections {}",
                                                      kBaseKey, fmt::join(sections, ", "))
                                        : fmt::format("did you mean {}?", fmt::join(near, " or "));
  return fmt::format("unknown scenario key {} ({}): {} (`ddpbench list --keys` lists every key)",
                     quoted_input(a.key), a.where, hint);
}

// `config_dir`: the folder of the file the assignment comes from, which a relative path in it
// is relative to; empty for the command line (relative to the working directory).
void apply_assignment(ScenarioSpec& spec, const Assignment& a,
                      const std::filesystem::path& config_dir = {}) {
  const ScenarioKey* key = find_scenario_key(a.key);
  if (key == nullptr) throw InputError(unknown_key_message(a));
  try {
    if (!a.scalar) throw std::invalid_argument(key->type);
    const bool rebase = key->path && !config_dir.empty() && !a.value.empty() &&
                        std::filesystem::path(a.value).is_relative();
    key->set(spec, rebase ? (config_dir / a.value).lexically_normal().string() : a.value);
  } catch (const std::invalid_argument&) {
    throw InputError(fmt::format("scenario key {} ({}): {} is not {}", a.key, a.where,
                                 a.scalar ? quoted_input(a.value) : "a list or mapping",
                                 key->type));
  }
}

// ---------------------------------------------------------------------------------------------
// Checks across keys

// Synthetic data (the DATA.* keys of data/synthetic_tensors.h): described whole or not at all,
// beside no data file, with a loss its targets take. `loss_set`: LOSS.NAME (or --loss) was given;
// when it was not, the targets pick the loss.
void check_synthetic_data(ScenarioSpec& spec, bool loss_set) {
  const data::SyntheticTensorsShape& d = spec.synthetic;
  const data::SyntheticTensorsShape none;
  if (!d.requested()) {
    const char* stray = d.input_dtype != none.input_dtype   ? "DATA.INPUT_DTYPE (--input-dtype)"
                        : d.vocab_size != none.vocab_size   ? "DATA.VOCAB_SIZE (--vocab-size)"
                        : d.num_classes != none.num_classes ? "DATA.NUM_CLASSES (--num-classes)"
                        : !d.target_shape.empty()           ? "DATA.TARGET_SHAPE (--target-shape)"
                        : d.samples != none.samples         ? "DATA.SAMPLES"
                                                            : nullptr;
    if (stray != nullptr) {
      throw InputError(fmt::format(
          "{} describes synthetic data, which needs DATA.INPUT_SHAPE (--input-shape) too: add "
          "the input shape, or drop it",
          stray));
    }
    return;
  }
  if (!spec.data_file.empty()) {
    throw InputError(
        "DATA.FILE (--data) and DATA.INPUT_SHAPE (--input-shape) both name the training data: "
        "pass one of them");
  }
  if ((d.num_classes > 0) == !d.target_shape.empty()) {
    throw InputError(fmt::format(
        "synthetic data needs one kind of target, {}: --num-classes N (class labels for "
        "cross_entropy or bce_one_hot) or --target-shape (regression targets for mse or rmse)",
        d.num_classes > 0 ? "and has two" : "and has none"));
  }
  if ((d.input_dtype == "int64") != (d.vocab_size > 0)) {
    throw InputError(d.vocab_size > 0
                         ? "DATA.VOCAB_SIZE (--vocab-size) bounds int64 token ids: add "
                           "--input-dtype int64, or drop --vocab-size"
                         : "int64 synthetic inputs are token ids drawn below a vocabulary size: "
                           "add --vocab-size N (the model's embedding rows)");
  }
  const bool classes = d.num_classes > 0;
  if (!loss_set) {
    spec.loss = classes ? LossKind::kCrossEntropy : LossKind::kMse;
  } else if (loss_takes_class_labels(spec.loss) != classes) {
    throw InputError(fmt::format(
        "LOSS.NAME (--loss) does not fit the synthetic targets: {} take {}; pick one of those",
        classes ? "class labels (--num-classes)" : "regression targets (--target-shape)",
        classes ? "cross_entropy or bce_one_hot" : "mse or rmse"));
  }
}

void check_combinations(ScenarioSpec& spec, const ScenarioSpec& base,
                        const ScenarioRegistry& registry, bool loss_set) {
  const OptimizerSpec& o = spec.optimizer;
  // torch.optim.SGD: "Nesterov momentum requires a momentum and zero dampening".
  if (o.nesterov && (o.momentum <= 0 || o.dampening != 0)) {
    throw InputError(
        "OPTIM.NESTEROV true needs OPTIM.MOMENTUM > 0 and OPTIM.DAMPENING 0 (torch.optim.SGD "
        "refuses it otherwise): set both, or OPTIM.NESTEROV false");
  }
  if (o.no_decay_lr_scale != 1 && o.no_decay.empty()) {
    throw InputError(fmt::format(
        "OPTIM.NO_DECAY_LR_SCALE {} scales the no-decay parameter group's rate, and OPTIM.NO_DECAY "
        "makes no such group: set OPTIM.NO_DECAY (e.g. 1d), or OPTIM.NO_DECAY_LR_SCALE 1",
        o.no_decay_lr_scale));
  }
  const ScheduleSpec& sched = o.schedule;
  if (sched.kind == ScheduleKind::kWarmupCosine && sched.decay_steps <= sched.warmup_steps) {
    throw InputError(fmt::format(
        "SCHED.DECAY_STEPS ({}) must be above SCHED.WARMUP_STEPS ({}): the cosine runs from the "
        "end of the warmup to DECAY_STEPS (nanoGPT's lr_decay_iters > warmup_iters)",
        sched.decay_steps, sched.warmup_steps));
  }
  if (sched.kind == ScheduleKind::kOneCycle &&
      !(sched.pct_start * static_cast<double>(sched.total_steps) > 1 &&
        sched.pct_start * static_cast<double>(sched.total_steps) - 1 <
            static_cast<double>(sched.total_steps - 1))) {
    throw InputError(fmt::format(
        "SCHED.PCT_START x SCHED.TOTAL_STEPS ({} x {}) leaves OneCycleLR a phase of no steps: "
        "raise SCHED.TOTAL_STEPS, or pick SCHED.PCT_START so that both phases have steps",
        sched.pct_start, sched.total_steps));
  }
  check_synthetic_data(spec, loss_set);  // settles the loss of synthetic data
  if (spec.label_smoothing != 0 && spec.loss != LossKind::kCrossEntropy) {
    throw InputError(fmt::format(
        "LOSS.LABEL_SMOOTHING {} smooths CrossEntropyLoss's targets, and this scenario's loss is "
        "{}: set LOSS.NAME cross_entropy, or LOSS.LABEL_SMOOTHING 0",
        spec.label_smoothing, name_in(kLossNames, spec.loss)));
  }
  // The data is the base's: class labels feed cross-entropy, regression targets feed (R)MSE. A
  // data file's targets are checked against the loss when it is read (inputs/data_file.h).
  const bool own_data = spec.synthetic.requested() || !spec.data_file.empty();
  if (!own_data && loss_takes_class_labels(spec.loss) != loss_takes_class_labels(base.loss)) {
    throw InputError(fmt::format(
        "LOSS.NAME (--loss) does not fit {}'s data ({}): its targets are {}; keep a loss for "
        "them",
        base.name, base.dataset_name,
        loss_takes_class_labels(base.loss) ? "class labels (cross_entropy or bce_one_hot)"
                                           : "regression values (mse or rmse)"));
  }
  // Tolerances are widened only with a written reason (Note [Tolerance model]).
  const Tolerances& t = spec.tolerances;
  const Tolerances& b = base.tolerances;
  const auto require_reason = [&](bool changed, const Tolerance& now, const Tolerance& before,
                                  const char* dtype) {
    if (changed && now.reason == before.reason) {
      throw InputError(fmt::format(
          "the {} tolerances differ from {}'s without a reason: set TOL.{}_REASON to why "
          "(Note [Tolerance model] in docs/ARCHITECTURE.md)",
          dtype, base.name, upper(dtype)));
    }
  };
  require_reason(t.float32.rtol != b.float32.rtol || t.float32.atol != b.float32.atol ||
                     t.gradient_float32 != b.gradient_float32,
                 t.float32, b.float32, "float32");
  require_reason(t.float64.rtol != b.float64.rtol || t.float64.atol != b.float64.atol ||
                     t.gradient_float64 != b.gradient_float64,
                 t.float64, b.float64, "float64");
  // A report named after another built-in would be read as that built-in's.
  for (const std::string& other : registry.names()) {
    if (spec.name == other && other != base.name) {
      throw InputError(fmt::format(
          "SCENARIO.NAME {} is another built-in scenario's name: name this one differently",
          quoted_input(spec.name)));
    }
  }
}

std::string base_name(const std::vector<Assignment>& file, const ScenarioRegistry& registry,
                      const std::string& path) {
  for (const Assignment& a : file) {
    if (a.key != kBaseKey) continue;
    const std::vector<std::string> names = registry.names();
    if (!a.scalar || std::find(names.begin(), names.end(), a.value) == names.end()) {
      throw InputError(fmt::format("{} ({}): {} is not a built-in scenario: the built-ins are {}",
                                   kBaseKey, a.where, quoted_input(a.value),
                                   fmt::join(names, ", ")));
    }
    return a.value;
  }
  throw InputError(fmt::format(
      "--config {} does not name its base: add {}: NAME, the built-in whose model and data it "
      "trains (one of {}; `ddpbench list --yaml NAME` prints a complete file)",
      quoted_input(path), kBaseKey, fmt::join(registry.names(), ", ")));
}

}  // namespace

ScenarioSpec configure_scenario(const ScenarioRegistry& registry, const ScenarioSource& source) {
  if (!source.configured()) return registry.get(source.scenario);
  const std::vector<Assignment> file =
      source.config.empty() ? std::vector<Assignment>{} : read_file(source.config);
  const std::vector<Assignment> overrides = read_overrides(source.overrides);
  const ScenarioSpec& base = registry.get(
      source.config.empty() ? source.scenario : base_name(file, registry, source.config));
  ScenarioSpec spec = base;
  const std::filesystem::path config_dir =
      source.config.empty() ? std::filesystem::path()
                            : std::filesystem::absolute(source.config).parent_path();
  bool loss_set = false;
  for (const Assignment& a : file) {
    if (a.key != kBaseKey) apply_assignment(spec, a, config_dir);
    loss_set = loss_set || a.key == "LOSS.NAME";
  }
  for (const Assignment& a : overrides) {
    apply_assignment(spec, a);
    loss_set = loss_set || a.key == "LOSS.NAME";
  }
  for (const FlagKey& f : source.flags) {
    apply_assignment(spec, {f.key, f.value, f.flag, true});
    loss_set = loss_set || f.key == "LOSS.NAME";
  }
  check_combinations(spec, base, registry, loss_set);
  spec.base = base.name;
  spec.configured_by = describe_source(source);
  return spec;
}

std::string describe_source(const ScenarioSource& source) {
  std::vector<std::string> words;
  if (!source.config.empty()) words = {"--config", source.config};
  for (const FlagKey& f : source.flags) words.insert(words.end(), {f.flag, f.value});
  words.insert(words.end(), source.overrides.begin(), source.overrides.end());
  return fmt::format("{}", fmt::join(words, " "));
}

// ---------------------------------------------------------------------------------------------
// Writing

std::string scenario_yaml(const ScenarioSpec& spec) {
  const std::string base = spec.base.empty() ? spec.name : spec.base;
  YAML::Emitter e;
  e << YAML::BeginMap;
  std::string section;
  for (const ScenarioKey& k : scenario_keys()) {
    if (key_section(k.name) != section) {
      if (!section.empty()) e << YAML::EndMap;
      section = key_section(k.name);
      e << YAML::Key << section << YAML::Value << YAML::BeginMap;
      if (section == key_section(kBaseKey)) {
        e << YAML::Key << std::string(kBaseKey).substr(section.size() + 1) << YAML::Value << base
          << YAML::Comment(fmt::format("built-in whose model ({}) and data ({}) this trains",
                                       spec.model_name, spec.dataset_name));
      }
    }
    // A path as the run resolved it, wherever the file is read again.
    std::string value = k.get(spec);
    if (k.path && !value.empty()) value = std::filesystem::absolute(value).lexically_normal();
    e << YAML::Key << k.name.substr(section.size() + 1) << YAML::Value << value
      << YAML::Comment(k.help);
  }
  e << YAML::EndMap << YAML::EndMap;
  return fmt::format(
      "# ddpbench scenario {}: run it with `ddpbench run --config FILE [KEY VALUE ...]`.\n"
      "# Every key is listed with `ddpbench list --keys`; the run's flags (--steps, --batch-size,\n"
      "# --seed, --dtype) override the TRAIN keys.\n{}\n",
      spec.name, e.c_str());
}

std::string scenario_keys_text() {
  std::string out = fmt::format("{:<20} {}\n", kBaseKey,
                                "a built-in scenario's name: the model and data the file trains "
                                "(`ddpbench list`); required in a file");
  for (const ScenarioKey& k : scenario_keys()) {
    out += fmt::format("{:<20} {}: {}\n", k.name, k.type, k.help);
  }
  return out;
}

}  // namespace ddpbench::scenarios
