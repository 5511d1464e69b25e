// first_sample_probe.cpp — see first_sample_probe.h.
#include "run/first_sample_probe.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>  // sizes as lists
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <regex>

#include "errors.h"
#include "scenarios/optim/autocast_scope.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::run {
namespace {

// The last line of an error (the TorchScript interpreter's message is its traceback).
std::string last_line(std::string why) {
  while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back()))) why.pop_back();
  return why.substr(why.find_last_of('\n') + 1);
}

// What a failed forward or loss says: a c10::Error's message without its C++ backtrace (whose last
// line is a stack frame: "frame #14: <unknown function> + 0x88191"), and of that the last line,
// where TorchScript's interpreter puts the cause.
std::string cause_of(const std::exception& e) {
  const auto* error = dynamic_cast<const c10::Error*>(&e);
  return last_line(error != nullptr ? error->what_without_backtrace() : e.what());
}

#if TORCH_VERSION_MAJOR >= 2
namespace warning_api = c10::WarningUtils;
#else
namespace warning_api = c10::Warning;
#endif

// Swallows libtorch's warnings while the first sample is probed, and restores the handler after:
// a probe that fails says why in its one line (the mismatch warning before it, through glog,
// printed "Logging before InitGoogleLogging()" and two more lines), and one that passes runs
// the same ops again in training, warnings and all.
class ProbeWarningsSilenced : public c10::WarningHandler {
 public:
  ProbeWarningsSilenced() : previous_(warning_api::get_warning_handler()) {
    warning_api::set_warning_handler(this);
  }
  ~ProbeWarningsSilenced() override { warning_api::set_warning_handler(previous_); }
  ProbeWarningsSilenced(const ProbeWarningsSilenced&) = delete;
  ProbeWarningsSilenced& operator=(const ProbeWarningsSilenced&) = delete;
#if TORCH_VERSION_MAJOR >= 2
  void process(const c10::Warning& /*warning*/) override {}
#else
  void process(const c10::SourceLocation& /*where*/, const std::string& /*message*/,
               bool /*verbatim*/) override {}
#endif

 private:
  c10::WarningHandler* previous_;
};

}  // namespace

// One forward and loss of the first training sample, in eval mode and without autograd, before
// anything starts: a --model that does not fit the data, or --data that does not fit the model or
// the loss, says so here, naming the shapes. Returns how many values the model outputs for it.
int64_t check_first_sample(const training::RunSetup& setup, const data::Dataset& dataset,
                           torch::nn::AnyModule& model) {
  const data::Example example = dataset.get(0, 0);
  at::Tensor input = example.input.unsqueeze(0);
  at::Tensor target = example.target.unsqueeze(0);
  if (input.is_floating_point()) input = input.to(setup.context.dtype);
  if (target.is_floating_point()) target = target.to(setup.context.dtype);
  const scenarios::ScenarioSpec& spec = *setup.spec;
  const std::string flag = !spec.model_file.empty()  ? "--model"
                           : !spec.data_file.empty() ? "--data"
                                                     : "--input-shape";
  const std::string data = !spec.data_file.empty()      ? "--data"
                           : spec.synthetic.requested() ? spec.dataset_name
                                                        : spec.name + "'s data";
  torch::NoGradGuard no_grad;
  const ProbeWarningsSilenced quiet;
  model.ptr()->to(setup.context.dtype);
  model.ptr()->eval();
  at::Tensor output;
  try {
    output = model.forward(input);
  } catch (const std::exception& e) {
    throw InputError(fmt::format(
        "{}: forward fails on a batch of shape {} {} ({}): {}; pass a model and data that fit",
        flag, input.sizes(), c10::toString(input.scalar_type()), data, cause_of(e)));
  }
  // Synthetic token ids are drawn below --vocab-size, and the first sample need not hold the
  // largest: an embedding smaller than that failed mid-run (exit 3, a TorchScript traceback cut
  // before its cause). Every id at the largest shows it here.
  const int64_t vocab = spec.synthetic.vocab_size;
  if (spec.synthetic.requested() && vocab > 0 && !input.is_floating_point()) {
    try {
      model.forward(torch::full_like(input, vocab - 1));
    } catch (const std::exception& e) {
      throw InputError(fmt::format(
          "--vocab-size {}: forward fails on token id {}, the largest the synthetic data draws: "
          "{}; pass a --vocab-size no larger than the model's embedding holds",
          vocab, vocab - 1, cause_of(e)));
    }
  }
  // One sample's label cannot show that a later one is past the model's outputs.
  const int64_t classes = spec.synthetic.num_classes;
  if (classes > 0 && (output.dim() != 2 || output.size(1) < classes)) {
    throw InputError(fmt::format(
        "--num-classes {}: the model's output for one sample has shape {}, not [1, N] with N >= "
        "{}; pass the number of classes the model's last layer outputs",
        classes, output.sizes(), classes));
  }
  try {
    scenarios::compute_loss(*setup.spec, output, target);
  } catch (const std::exception& e) {
    throw InputError(fmt::format(
        "{}: {}'s loss {} fails on an output of shape {} and a target of shape {} {} ({}): {}; "
        "pass a model and data that fit the loss",
        flag, setup.spec->name, scenarios::loss_name(setup.spec->loss), output.sizes(),
        target.sizes(), c10::toString(target.scalar_type()), data, cause_of(e)));
  }
  model.ptr()->train();
  return output.numel();
}

int64_t smallest_training_batch(const training::RunSetup& setup,
                                const data::GlobalBatchPlan& plan) {
  const bool parallel = setup.has_per_rank_mode() || setup.has_mode(modes::ModeKind::kDp);
  // Each phase walks the plan from step 0; every epoch has the same batch sizes.
  const int64_t steps = std::min(std::max(setup.check_steps, setup.warmup_steps + setup.perf_steps),
                                 plan.steps_per_epoch());
  const data::EpochPlan epoch = plan.epoch(0);
  int64_t smallest = 0;
  const auto offer = [&smallest](int64_t n) {
    if (n > 0) smallest = smallest == 0 ? n : std::min(smallest, n);
  };
  for (int64_t step = 0; step < steps; ++step) {
    if (!parallel) {
      offer(plan.samples_at(step));  // single trains the whole batch in one pass
      continue;
    }
    for (int64_t share : epoch.chunk_sizes(step)) offer(share / setup.accumulation_steps);
  }
  return smallest;
}

namespace {

// What check_training_step changes in a model and leaves as it found it: the buffers a training
// forward updates (BatchNorm's running statistics), the gradients backward leaves, and the draws of
// the default generator (dropout).
class TrainingProbeScope {
 public:
  explicit TrainingProbeScope(torch::nn::Module& model)
      : model_(model), generator_(at::detail::getDefaultCPUGenerator()) {
    {
      std::lock_guard<std::mutex> lock(generator_.mutex());
      generator_state_ = generator_.get_state();
    }
    for (const at::Tensor& b : model_.buffers()) buffers_.push_back(b.clone());
  }
  ~TrainingProbeScope() {
    torch::NoGradGuard no_grad;
    const std::vector<at::Tensor> now = model_.buffers();
    for (size_t i = 0; i < now.size() && i < buffers_.size(); ++i) now[i].copy_(buffers_[i]);
    for (at::Tensor& p : model_.parameters()) p.mutable_grad() = at::Tensor();
    std::lock_guard<std::mutex> lock(generator_.mutex());
    generator_.set_state(generator_state_);
  }
  TrainingProbeScope(const TrainingProbeScope&) = delete;
  TrainingProbeScope& operator=(const TrainingProbeScope&) = delete;

 private:
  torch::nn::Module& model_;
  at::Generator generator_;
  at::Tensor generator_state_;
  std::vector<at::Tensor> buffers_;
};

// Where a training step failed and why, or nothing when it ran.
struct StepFailure {
  std::string where;  // "forward", "loss" or "backward"
  std::string cause;  // the error's cause line
};

std::optional<StepFailure> try_training_step(const training::RunSetup& setup,
                                             torch::nn::AnyModule& model, const at::Tensor& input,
                                             const at::Tensor& target,
                                             std::optional<at::ScalarType> autocast) {
  const char* where = "forward";
  try {
    at::Tensor loss;
    {
      std::optional<scenarios::AutocastScope> scope;
      if (autocast) scope.emplace(c10::kCPU, *autocast);
      const at::Tensor output = model.forward(input);
      where = "loss";
      loss = scenarios::compute_loss(*setup.spec, output, target);
    }
    where = "backward";
    loss.backward();
  } catch (const std::exception& e) {
    return StepFailure{where, cause_of(e)};
  }
  return std::nullopt;
}

// The kernel a libtorch error names: "hardshrink_backward_cpu" of `"hardshrink_backward_cpu" not
// implemented for 'BFloat16'`, or "" when it names none.
std::string missing_kernel(const std::string& cause) {
  static const std::regex named("\"([A-Za-z0-9_]+)\" not implemented for");
  std::smatch m;
  return std::regex_search(cause, m, named) ? m[1].str() : std::string();
}

}  // namespace

void check_training_step(const training::RunSetup& setup, const data::Dataset& dataset,
                         torch::nn::AnyModule& model, int64_t batch) {
  const std::optional<at::ScalarType> autocast = setup.context.device == runtime::DeviceKind::kCpu
                                                     ? scenarios::autocast_dtype_of(setup.spec->amp)
                                                     : std::nullopt;
  if (batch < 1 || (batch > kProbedBatch && !autocast)) return;
  const data::Example example = dataset.get(0, 0);
  at::Tensor input = at::stack(std::vector<at::Tensor>(static_cast<size_t>(batch), example.input));
  at::Tensor target =
      at::stack(std::vector<at::Tensor>(static_cast<size_t>(batch), example.target));
  if (input.is_floating_point()) input = input.to(setup.context.dtype);
  if (target.is_floating_point()) target = target.to(setup.context.dtype);
  torch::nn::Module& module = *model.ptr();
  module.to(setup.context.dtype);
  const ProbeWarningsSilenced quiet;
  const TrainingProbeScope restore(module);
  torch::AutoGradMode grad(true);
  module.train();
  if (const auto failed = try_training_step(setup, model, input, target, std::nullopt)) {
    const std::string flag = !setup.spec->model_file.empty()  ? "--model"
                             : !setup.spec->data_file.empty() ? "--data"
                                                              : "--input-shape";
    const bool parallel = setup.has_per_rank_mode() || setup.has_mode(modes::ModeKind::kDp);
    const std::string share =
        !parallel ? fmt::format("a whole step of the global batch of {}", setup.global_batch)
                  : fmt::format("one replica's share of the global batch of {} over {} replicas{}",
                                setup.global_batch, setup.world_size,
                                setup.accumulation_steps > 1
                                    ? fmt::format(" in {} micro-batches", setup.accumulation_steps)
                                    : std::string());
    throw InputError(fmt::format(
        "{}: a training step's {} fails on a batch of shape {} {} ({}, the fewest samples one "
        "forward trains on in this run), though one sample passes in eval mode: {}; pass a "
        "--batch-size that gives every forward more samples (or fewer --gpus), or a model that "
        "trains on {} sample(s)",
        flag, failed->where, input.sizes(), c10::toString(input.scalar_type()), share,
        failed->cause, batch));
  }
  if (!autocast) return;
  if (const auto failed = try_training_step(setup, model, input, target, autocast)) {
    const char* amp = scenarios::amp_name(setup.spec->amp);
    const std::string kernel = missing_kernel(failed->cause);
    const std::string what =
        kernel.empty()
            ? fmt::format("the model's {} fails under autocast to {} on the CPU: {}", failed->where,
                          c10::toString(*autocast), failed->cause)
            : fmt::format(
                  "this libtorch ({}.{}) has no {} CPU kernel for {}, which the model's {} "
                  "reaches under autocast ({})",
                  TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR, c10::toString(*autocast), kernel,
                  failed->where, failed->cause);
    throw InputError(fmt::format(
        "--amp {}: {}; drop --amp {}, or build ddpbench against a libtorch that has it (PyTorch "
        "2.x: ci/build.sh --torch python)",
        amp, what, amp));
  }
  module.train();
}

// The default evaluation pass (512 samples for most scenarios) is sized for classifier heads; a
// model with millions of outputs per sample spent minutes in it, silently (issue 51 defect 16).
// Unless --eval-size was given, the pass computes at most this many output values.
constexpr int64_t kDefaultEvalOutputs = int64_t{1} << 24;

void size_evaluation_by_output(const requests::RunRequest& request, int64_t outputs_per_sample,
                               training::RunSetup& setup) {
  if (request.eval_size >= 0 || outputs_per_sample <= 0 || setup.eval_size <= 0) return;
  if (setup.eval_size <= kDefaultEvalOutputs / outputs_per_sample) return;
  const int64_t capped = std::max<int64_t>(1, kDefaultEvalOutputs / outputs_per_sample);
  setup.eval_size_note = fmt::format(
      "the evaluation pass takes {} sample(s), not the default {}: the model outputs {} values "
      "per sample, and the default pass computes at most {}; --eval-size N chooses",
      capped, setup.eval_size, outputs_per_sample, kDefaultEvalOutputs);
  setup.eval_size = capped;
}

}  // namespace ddpbench::run
