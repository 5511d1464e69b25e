// scenario_keys.cpp — see scenario_keys.h. The table is at the bottom; above it, one builder per
// value type, each holding the only parser and the only printer of its type, so every row of a
// type reads and writes the same way.
#include "scenarios/scenario_keys.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <regex>
#include <stdexcept>
#include <utility>

#include "input_bounds.h"

namespace ddpbench::scenarios {
namespace {

constexpr int64_t kMaxSeed = std::numeric_limits<int64_t>::max();
// The upper bound of keys without a natural one (tolerances, the clipping norm): far past any
// useful value, and still a float32 number.
constexpr double kMaxScenarioNumber = 1e30;

// A ScenarioSpec field by path, for const and non-const specs alike: one accessor serves both
// the getter and the setter of a row.
#define DDPBENCH_FIELD(path) \
  [](auto& spec) -> auto& { return spec.path; }

template <class Field>
ScenarioKey integer_key(std::string name, Field field, int64_t lo, int64_t hi, std::string help) {
  std::string type = hi == kMaxSeed ? fmt::format("an integer >= {}", lo)
                                    : fmt::format("an integer from {} to {}", lo, hi);
  return {std::move(name), type, std::move(help),
          [field](const ScenarioSpec& s) { return fmt::format("{}", field(s)); },
          [field, lo, hi, type](ScenarioSpec& s, const std::string& text) {
            int64_t v = 0;
            const char* end = text.data() + text.size();
            const auto [ptr, ec] = std::from_chars(text.data(), end, v);
            if (text.empty() || ec != std::errc() || ptr != end || v < lo || v > hi) {
              throw std::invalid_argument(type);
            }
            field(s) = v;
          }};
}

// Shortest text that reads back to the same double, and still looks like a number with a
// fraction (0.0, not 0) so a reader of the file sees the field is not an integer.
std::string number_text(double v) {
  std::string t = fmt::format("{}", v);
  if (t.find_first_of(".eEn") == std::string::npos) t += ".0";
  return t;
}

// `text` as a finite number, or nothing. strtod also skips leading blanks and reads hexadecimal:
// neither is a number in a file. A nonzero literal that underflows to 0 (1e-400) is nothing too:
// it would silently turn a learning rate into none.
std::optional<double> finite_number(const std::string& text) {
  if (text.empty() || text.find_first_of(" \t\nxX") != std::string::npos) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v)) return std::nullopt;
  if (v == 0 && errno == ERANGE) return std::nullopt;
  return v;
}

// The values a number key accepts: from `lo` to `hi`, `hi` itself excluded where `hi_open`
// (Adam's betas: torch.optim.Adam refuses 1). Every upper bound is finite and far below float's
// largest value, so no key can make libtorch's Scalar conversion ("cannot be converted to type
// float without overflow") fail inside a worker after the launch.
struct NumberDomain {
  double lo;
  double hi;
  bool hi_open = false;
};

std::string domain_text(const NumberDomain& d) {
  if (d.hi_open) {
    return fmt::format("a number from {} up to, not including, {}", number_text(d.lo),
                       number_text(d.hi));
  }
  return fmt::format("a number from {} to {}", number_text(d.lo), number_text(d.hi));
}

template <class Field>
ScenarioKey number_key(std::string name, Field field, NumberDomain domain, std::string help) {
  std::string type = domain_text(domain);
  return {std::move(name), type, std::move(help),
          [field](const ScenarioSpec& s) { return number_text(field(s)); },
          [field, domain, type](ScenarioSpec& s, const std::string& text) {
            const std::optional<double> v = finite_number(text);
            if (!v || *v < domain.lo || *v > domain.hi || (domain.hi_open && *v == domain.hi)) {
              throw std::invalid_argument(type);
            }
            field(s) = *v;
          }};
}

// A positive number, or none (the field's std::optional is empty).
template <class Field>
ScenarioKey optional_number_key(std::string name, Field field, std::string help) {
  const std::string type =
      fmt::format("a number above 0 and at most {}, or none", number_text(kMaxScenarioNumber));
  return {std::move(name), type, std::move(help),
          [field](const ScenarioSpec& s) {
            return field(s) ? number_text(*field(s)) : std::string("none");
          },
          [field, type](ScenarioSpec& s, const std::string& text) {
            if (text == "none") {
              field(s).reset();
              return;
            }
            const std::optional<double> v = finite_number(text);
            if (!v || *v <= 0 || *v > kMaxScenarioNumber) throw std::invalid_argument(type);
            field(s) = *v;
          }};
}

template <class Field>
ScenarioKey boolean_key(std::string name, Field field, std::string help) {
  return {std::move(name), "true or false", std::move(help),
          [field](const ScenarioSpec& s) { return std::string(field(s) ? "true" : "false"); },
          [field](ScenarioSpec& s, const std::string& text) {
            if (text != "true" && text != "false") throw std::invalid_argument("true or false");
            field(s) = text == "true";
          }};
}

// Any text, or text matching `pattern` (whose meaning `type` says).
template <class Field>
ScenarioKey text_key(std::string name, Field field, std::string help, std::string type = "text",
                     const std::string& pattern = "") {
  return {std::move(name), type, std::move(help),
          [field](const ScenarioSpec& s) { return std::string(field(s)); },
          [field, type, pattern](ScenarioSpec& s, const std::string& text) {
            if (!pattern.empty() && !std::regex_match(text, std::regex(pattern))) {
              throw std::invalid_argument(type);
            }
            field(s) = text;
          }};
}

// A path, or empty for none (scenario_keys.h says how a relative one is read).
template <class Field>
ScenarioKey path_key(std::string name, Field field, std::string help) {
  ScenarioKey key =
      text_key(std::move(name), field, std::move(help), "a file path, or empty for none");
  key.path = true;
  return key;
}

// A tensor shape per sample, "3,32,32", or none (the field's vector is empty). Far past any real
// sample, the bound keeps one generated sample inside memory.
constexpr int64_t kMaxSampleElements = int64_t{1} << 24;

template <class Field>
ScenarioKey shape_key(std::string name, Field field, std::string help) {
  const std::string type =
      fmt::format("a shape such as 3,32,32 (sizes >= 1, at most {} elements in all), or none",
                  kMaxSampleElements);
  return {std::move(name), type, std::move(help),
          [field](const ScenarioSpec& s) {
            return field(s).empty() ? std::string("none")
                                    : fmt::format("{}", fmt::join(field(s), ","));
          },
          [field, type](ScenarioSpec& s, const std::string& text) {
            std::vector<int64_t> dims;
            if (text != "none") {
              int64_t elements = 1;
              size_t begin = 0;
              while (true) {
                const size_t end = std::min(text.find(',', begin), text.size());
                int64_t v = 0;
                const auto [ptr, ec] = std::from_chars(text.data() + begin, text.data() + end, v);
                if (begin == end || ec != std::errc() || ptr != text.data() + end || v < 1 ||
                    v > kMaxSampleElements || (elements *= v) > kMaxSampleElements) {
                  throw std::invalid_argument(type);
                }
                dims.push_back(v);
                if (end == text.size()) break;
                begin = end + 1;
              }
            }
            field(s) = dims;
          }};
}

// OPTIM.NO_DECAY's rules: "none", or a comma list of "1d" and parameter-name substrings (each a
// piece of a module path: letters, digits, _ and .).
template <class Field>
ScenarioKey rule_list_key(std::string name, Field field, std::string help) {
  const std::string type =
      "none, or a comma list of 1d and parameter-name substrings (letters, digits, _ and .)";
  return {std::move(name), type, std::move(help),
          [field](const ScenarioSpec& s) {
            return field(s).empty() ? std::string("none")
                                    : fmt::format("{}", fmt::join(field(s), ","));
          },
          [field, type](ScenarioSpec& s, const std::string& text) {
            std::vector<std::string> rules;
            if (text != "none") {
              static const std::regex kRule("[A-Za-z0-9_.]+");
              size_t begin = 0;
              while (true) {
                const size_t end = std::min(text.find(',', begin), text.size());
                std::string rule = text.substr(begin, end - begin);
                if (!std::regex_match(rule, kRule)) throw std::invalid_argument(type);
                rules.push_back(std::move(rule));
                if (end == text.size()) break;
                begin = end + 1;
              }
            }
            field(s) = rules;
          }};
}

// A choice key's names from one of choice_names.h's tables.
template <typename E, size_t N>
std::vector<std::pair<std::string, E>> choices_of(const NameTable<E, N>& table) {
  std::vector<std::pair<std::string, E>> out;
  for (const auto& [value, name] : table) out.emplace_back(std::string(name), value);
  return out;
}

// One of a fixed list of names, each standing for a value of the field's type.
template <class Field, class Value>
ScenarioKey choice_key(std::string name, Field field,
                       std::vector<std::pair<std::string, Value>> choices, std::string help) {
  std::string type = "one of";
  for (size_t i = 0; i < choices.size(); ++i) {
    type += (i == 0 ? " " : ", ") + choices[i].first;
  }
  return {std::move(name), type, std::move(help),
          [field, choices](const ScenarioSpec& s) {
            for (const auto& [text, value] : choices) {
              if (field(s) == value) return text;
            }
            throw std::logic_error("a scenario field holds a value its key cannot name");
          },
          [field, choices, type](ScenarioSpec& s, const std::string& text) {
            for (const auto& [choice, value] : choices) {
              if (choice == text) {
                field(s) = value;
                return;
              }
            }
            throw std::invalid_argument(type);
          }};
}

// The scenario's name and how it trains: batch, steps, seed, dtype, mixed precision, sampler,
// accumulation.
std::vector<ScenarioKey> run_keys() {
  return {
      // SCENARIO.BASE comes first in a file; scenario_config.h reads it.
      text_key("SCENARIO.NAME", DDPBENCH_FIELD(name),
               "the name reports, `list` and the gate's points use",
               "a lower_snake_case name (a-z, 0-9, _; a letter first)", "[a-z][a-z0-9_]*"),
      text_key("SCENARIO.SUMMARY", DDPBENCH_FIELD(summary), "one line for `ddpbench list`"),
      integer_key("TRAIN.BATCH_SIZE", DDPBENCH_FIELD(global_batch), 1, kMaxBatch,
                  "global batch, all ranks together (--batch-size overrides it)"),
      integer_key("TRAIN.STEPS", DDPBENCH_FIELD(steps), 1, kMaxSteps,
                  "training steps (--steps overrides it)"),
      integer_key("TRAIN.SEED", DDPBENCH_FIELD(seed), 0, kMaxSeed,
                  "seed of init, shuffle and augmentation (--seed overrides it)"),
      choice_key("TRAIN.DTYPE", DDPBENCH_FIELD(dtype),
                 std::vector<std::pair<std::string, std::string>>{{"float32", "float32"},
                                                                  {"float64", "float64"}},
                 "training dtype (--dtype overrides it)"),
      choice_key("TRAIN.AMP", DDPBENCH_FIELD(amp), choices_of(kAmpNames),
                 "automatic mixed precision: forward and loss under autocast to bfloat16, or "
                 "float16 with a GradScaler (--amp sets it)"),
      number_key(
          "TRAIN.GRAD_SCALER_INIT", DDPBENCH_FIELD(grad_scaler.init_scale),
          NumberDomain{1, 0x1p120},
          "--amp fp16: the GradScaler's initial scale, 2^16 by default (--grad-scaler-init)"),
      integer_key("TRAIN.GRAD_SCALER_GROWTH_INTERVAL", DDPBENCH_FIELD(grad_scaler.growth_interval),
                  1, int64_t{1} << 30,
                  "--amp fp16: clean steps before the scale doubles, 2000 by default "
                  "(--growth-interval)"),
      boolean_key("TRAIN.SHUFFLE", DDPBENCH_FIELD(shuffle), "DistributedSampler(shuffle=...)"),
      boolean_key("TRAIN.DROP_LAST", DDPBENCH_FIELD(sampler_drop_last),
                  "DistributedSampler(drop_last=...)"),
      integer_key(
          "TRAIN.ACCUMULATION_STEPS", DDPBENCH_FIELD(accumulation_steps), 1, 1024,
          "micro-steps per optimizer step in dp, ddp and zero (--accumulation-steps sets it)"),
  };
}

// What it trains on: a data file or synthetic tensors, and the loss.
std::vector<ScenarioKey> data_keys() {
  return {
      path_key("DATA.FILE", DDPBENCH_FIELD(data_file),
               "torch.save file of {inputs, targets} trained on instead of the base's data "
               "(--data sets it)"),
      shape_key("DATA.INPUT_SHAPE", DDPBENCH_FIELD(synthetic.input_shape),
                "synthetic data instead of the base's: one sample's input shape (--input-shape)"),
      choice_key("DATA.INPUT_DTYPE", DDPBENCH_FIELD(synthetic.input_dtype),
                 std::vector<std::pair<std::string, std::string>>{{"float32", "float32"},
                                                                  {"int64", "int64"}},
                 "synthetic inputs: normal floats (in the run's dtype) or int64 token ids "
                 "(--input-dtype)"),
      integer_key("DATA.VOCAB_SIZE", DDPBENCH_FIELD(synthetic.vocab_size), 0, int64_t{1} << 31,
                  "synthetic int64 inputs: ids are drawn below it (--vocab-size); 0 for floats"),
      integer_key("DATA.NUM_CLASSES", DDPBENCH_FIELD(synthetic.num_classes), 0, int64_t{1} << 24,
                  "synthetic class-label targets (--num-classes); 0 for regression targets"),
      shape_key("DATA.TARGET_SHAPE", DDPBENCH_FIELD(synthetic.target_shape),
                "synthetic regression targets' shape per sample (--target-shape)"),
      integer_key("DATA.SAMPLES", DDPBENCH_FIELD(synthetic.samples), 1, kMaxBatch,
                  "samples in the synthetic training split"),
      choice_key("LOSS.NAME", DDPBENCH_FIELD(loss), choices_of(kLossNames),
                 "CrossEntropyLoss, MSELoss, sqrt(MSELoss) or binary_cross_entropy(sigmoid(x), "
                 "one_hot(y)) (--loss sets it); mse and rmse need regression targets"),
      number_key("LOSS.LABEL_SMOOTHING", DDPBENCH_FIELD(label_smoothing), NumberDomain{0, 1},
                 "CrossEntropyLoss(label_smoothing=...): the target's mass spread over every "
                 "class (cross_entropy only)"),
  };
}

// The optimizer and its hyper-parameters.
std::vector<ScenarioKey> optimizer_keys() {
  // torch.optim.SGD and Adam refuse negative lr, momentum, weight_decay and eps and betas outside
  // [0, 1); above them, bounds past any real recipe (a learning rate of 1000 already diverges).
  constexpr NumberDomain kLearningRate{0, 1e3};
  constexpr NumberDomain kUnit{0, 1};
  constexpr NumberDomain kBeta{0, 1, /*hi_open=*/true};
  return {
      choice_key("OPTIM.NAME", DDPBENCH_FIELD(optimizer.kind), choices_of(kOptimizerNames),
                 "torch.optim.SGD, Adam or AdamW (decoupled weight decay)"),
      number_key("OPTIM.BASE_LR", DDPBENCH_FIELD(optimizer.lr), kLearningRate, "learning rate"),
      number_key("OPTIM.MOMENTUM", DDPBENCH_FIELD(optimizer.momentum), kUnit, "SGD momentum"),
      number_key("OPTIM.DAMPENING", DDPBENCH_FIELD(optimizer.dampening), kUnit, "SGD dampening"),
      number_key("OPTIM.WEIGHT_DECAY", DDPBENCH_FIELD(optimizer.weight_decay), kLearningRate,
                 "weight decay (SGD, Adam: L2 added to the gradient; AdamW: decoupled)"),
      rule_list_key("OPTIM.NO_DECAY", DDPBENCH_FIELD(optimizer.no_decay),
                    "parameters stepped with weight decay 0, in a second parameter group: 1d "
                    "(fewer than 2 dimensions, nanoGPT's rule) or name substrings, e.g. 1d,bias"),
      number_key("OPTIM.NO_DECAY_LR_SCALE", DDPBENCH_FIELD(optimizer.no_decay_lr_scale),
                 kLearningRate,
                 "the no-decay group's learning rate as a multiple of the scheduled rate (1: "
                 "the same rate)"),
      boolean_key("OPTIM.NESTEROV", DDPBENCH_FIELD(optimizer.nesterov),
                  "Nesterov momentum (needs MOMENTUM > 0 and DAMPENING 0)"),
      number_key("OPTIM.BETA1", DDPBENCH_FIELD(optimizer.beta1), kBeta, "Adam(W) betas[0]"),
      number_key("OPTIM.BETA2", DDPBENCH_FIELD(optimizer.beta2), kBeta, "Adam(W) betas[1]"),
      number_key("OPTIM.EPS", DDPBENCH_FIELD(optimizer.eps), kUnit, "Adam(W) eps"),
      optional_number_key("OPTIM.CLIP_GRAD_NORM", DDPBENCH_FIELD(clip_grad_norm),
                          "clip_grad_norm_ max_norm after the gradient reduction, or none"),
  };
}

// The learning-rate schedule (scenarios/optim/lr_schedule.h), stepped once per optimizer step.
std::vector<ScenarioKey> schedule_keys() {
  return {
      choice_key("SCHED.NAME", DDPBENCH_FIELD(optimizer.schedule.kind), choices_of(kScheduleNames),
                 "the learning rate per optimizer step: OPTIM.BASE_LR, StepLR, or nanoGPT's linear "
                 "warmup then cosine decay to SCHED.MIN_LR"),
      integer_key("SCHED.STEP_SIZE", DDPBENCH_FIELD(optimizer.schedule.step_size), 1, kMaxSteps,
                  "step: the rate is multiplied by SCHED.GAMMA every this many steps"),
      number_key("SCHED.GAMMA", DDPBENCH_FIELD(optimizer.schedule.gamma), NumberDomain{0, 1},
                 "step: StepLR's gamma"),
      integer_key("SCHED.WARMUP_STEPS", DDPBENCH_FIELD(optimizer.schedule.warmup_steps), 0,
                  kMaxSteps, "warmup_cosine: linear warmup steps (nanoGPT's warmup_iters)"),
      integer_key("SCHED.DECAY_STEPS", DDPBENCH_FIELD(optimizer.schedule.decay_steps), 1, kMaxSteps,
                  "warmup_cosine: the step the cosine reaches SCHED.MIN_LR (lr_decay_iters); "
                  "above SCHED.WARMUP_STEPS"),
      number_key("SCHED.MIN_LR", DDPBENCH_FIELD(optimizer.schedule.min_lr), NumberDomain{0, 1e3},
                 "warmup_cosine: the floor the cosine decays to"),
      integer_key("SCHED.TOTAL_STEPS", DDPBENCH_FIELD(optimizer.schedule.total_steps), 1, kMaxSteps,
                  "onecycle: OneCycleLR's total_steps (a run may not be longer)"),
      number_key("SCHED.PCT_START", DDPBENCH_FIELD(optimizer.schedule.pct_start),
                 NumberDomain{0, 1}, "onecycle: the share of the steps the rate rises in"),
  };
}

// The evaluation pass, the model file, SyncBN, and the tolerances the checks use.
std::vector<ScenarioKey> check_keys() {
  constexpr NumberDomain kTolerance{0, kMaxScenarioNumber};
  return {
      integer_key("EVAL.SIZE", DDPBENCH_FIELD(eval_size), 0, kMaxBatch,
                  "samples of the held-out set the evaluation pass uses (--eval-size sets it)"),
      integer_key("EVAL.BATCH_SIZE", DDPBENCH_FIELD(eval_batch), 1, kMaxBatch,
                  "samples per evaluation batch (per rank under DDP)"),
      path_key("MODEL.FILE", DDPBENCH_FIELD(model_file),
               "TorchScript file trained instead of the base's model (--model sets it)"),
      boolean_key("MODEL.SYNC_BN", DDPBENCH_FIELD(sync_bn),
                  "DDP converts BatchNorm to SyncBN (--sync-bn sets it too)"),
      boolean_key("MODEL.CHANNELS_LAST", DDPBENCH_FIELD(channels_last),
                  "4-D weights and inputs in channels_last memory format (convolutional models)"),
      number_key("TOL.FLOAT32_RTOL", DDPBENCH_FIELD(tolerances.float32.rtol), kTolerance,
                 "float32 pass rule |a-b| <= ATOL + RTOL |ref|: parameters, buffers, losses"),
      number_key("TOL.FLOAT32_ATOL", DDPBENCH_FIELD(tolerances.float32.atol), kTolerance,
                 "float32 absolute tolerance"),
      text_key("TOL.FLOAT32_REASON", DDPBENCH_FIELD(tolerances.float32.reason),
               "why the float32 tolerances are these (a change needs a new reason)"),
      number_key("TOL.FLOAT64_RTOL", DDPBENCH_FIELD(tolerances.float64.rtol), kTolerance,
                 "float64 relative tolerance"),
      number_key("TOL.FLOAT64_ATOL", DDPBENCH_FIELD(tolerances.float64.atol), kTolerance,
                 "float64 absolute tolerance"),
      text_key("TOL.FLOAT64_REASON", DDPBENCH_FIELD(tolerances.float64.reason),
               "why the float64 tolerances are these (a change needs a new reason)"),
      number_key("TOL.GRAD_FLOAT32", DDPBENCH_FIELD(tolerances.gradient_float32), kTolerance,
                 "float32 gradients: max |g - g_ref| / max |g_ref| per tensor and step"),
      number_key("TOL.GRAD_FLOAT64", DDPBENCH_FIELD(tolerances.gradient_float64), kTolerance,
                 "float64 gradients: the same scale-free error"),
  };
}

std::vector<ScenarioKey> make_table() {
  std::vector<ScenarioKey> keys;
  for (std::vector<ScenarioKey> (*group)() :
       {run_keys, data_keys, optimizer_keys, schedule_keys, check_keys}) {
    for (ScenarioKey& key : group()) keys.push_back(std::move(key));
  }
  return keys;
}

#undef DDPBENCH_FIELD

}  // namespace

const std::vector<ScenarioKey>& scenario_keys() {
  static const std::vector<ScenarioKey> table = make_table();
  return table;
}

const ScenarioKey* find_scenario_key(const std::string& name) {
  for (const ScenarioKey& k : scenario_keys()) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string key_section(const std::string& name) { return name.substr(0, name.find('.')); }

}  // namespace ddpbench::scenarios
