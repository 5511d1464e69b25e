// resume.cpp — see resume.h.
#include "run/resume.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "errors.h"
#include "input_bounds.h"
#include "input_file.h"
#include "modes/common/trained_parameters.h"
#include "modes/ddp/bucket_assignment.h"
#include "quoted_input.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::run {
namespace {

// One setting the checkpoint's run and this one must share. `valid` says whether the saved value
// is one the flag takes: a file saying --seed -5 or --dtype float16 is damaged or not ddpbench's,
// and its value is no advice.
template <typename T>
void require_same(const std::string& path, const char* flag, const T& saved, const T& here,
                  bool valid) {
  if (saved == here) return;
  if (!valid) {
    throw InputError(fmt::format(
        "--resume {}: says it was saved by a run with {} {}, a value ddpbench does not take: pass "
        "a checkpoint written by `ddpbench run --checkpoint-every N`",
        quoted_input(path), flag, quoted_input(fmt::format("{}", saved))));
  }
  throw InputError(fmt::format(
      "--resume {}: saved by a run with {} {}, and this run has {} {}: pass {} {} to continue "
      "its training",
      quoted_input(path), flag, saved, flag, here, flag, saved));
}

// The scenario first, before the tensors: another scenario's file would fail on its first key,
// which says less. A name that is no built-in scenario came from a scenario file (--config).
void require_scenario(const std::string& path, const std::string& saved,
                      const training::RunSetup& setup,
                      const scenarios::ScenarioRegistry& registry) {
  if (saved == setup.spec->name) return;
  const std::vector<std::string> names = registry.names();
  if (std::find(names.begin(), names.end(), saved) != names.end()) {
    require_same(path, "--scenario", saved, setup.spec->name, true);
  }
  throw InputError(fmt::format(
      "--resume {}: saved by a run of scenario {}, and this run's is {}: pass the --config file "
      "that names {} to continue its training",
      quoted_input(path), quoted_input(saved), setup.spec->name, quoted_input(saved)));
}

}  // namespace

std::shared_ptr<const checkpoint::Checkpoint> load_resume(const std::string& path,
                                                     const training::RunSetup& setup,
                                                     const scenarios::ScenarioRegistry& registry,
                                                     const torch::nn::Module& model,
                                                     const data::GlobalBatchPlan& plan) {
  const auto bytes = read_input_file<std::vector<char>>(
      path, "--resume",
      "pass a checkpoint written by `ddpbench run --checkpoint-every N` "
      "(checkpoint_<mode>_step<N>.pt in its --out)");
  // What shapes the trajectory before the tensors: a float64 checkpoint offered to a float32 run
  // is refused for its --dtype, not for its first tensor's dtype.
  const auto check_meta = [&](const checkpoint::CheckpointMeta& m) {
    require_scenario(path, m.scenario, setup, registry);
    if (!m.model.empty() && m.model != setup.spec->model_name) {
      throw InputError(fmt::format(
          "--resume {}: saved by a run that trained {}, and this run trains {}: pass the --model "
          "file that run trained (or none, for the scenario's own model)",
          quoted_input(path), quoted_input(m.model), quoted_input(setup.spec->model_name)));
    }
    require_same(path, "--seed", m.seed, setup.seed, m.seed >= 0);
    require_same(path, "--batch-size", m.global_batch, setup.global_batch,
                 m.global_batch >= 1 && m.global_batch <= kMaxBatch);
    require_same(path, "--gpus", m.world_size, setup.world_size, m.world_size >= 1);
    require_same(path, "--dtype", m.dtype, std::string(setup.dtype_name()),
                 m.dtype == "float32" || m.dtype == "float64");
    require_same(path, "--amp", m.amp, std::string(scenarios::amp_name(setup.spec->amp)),
                 value_named(scenarios::kAmpNames, m.amp).has_value());
  };
  auto c = std::make_shared<checkpoint::Checkpoint>(
      checkpoint::parse_checkpoint(bytes, path, model, setup.spec->optimizer, check_meta));
  const checkpoint::CheckpointMeta& m = c->meta;
  const std::optional<modes::ModeKind> mode = modes::parse_mode(m.mode);
  if (!mode) {
    throw InputError(fmt::format(
        "--resume {}: saved by mode {}, which is no ddpbench mode ({}): pass a checkpoint written "
        "by `ddpbench run --checkpoint-every N`",
        quoted_input(path), quoted_input(m.mode), modes::known_mode_names()));
  }
  // A zero checkpoint holds the consolidated optimizer state, a plain optimizer's as DDP's does:
  // either resumes the other (modes/zero/consolidated_state.h).
  const bool per_rank_twin = modes::runs_per_rank(*mode) && setup.has_per_rank_mode();
  if (!setup.has_mode(*mode) && !per_rank_twin) {
    throw InputError(fmt::format(
        "--resume {}: saved by mode {}, which this run does not have: add {} to --modes (the "
        "run's other modes start from its state too)",
        quoted_input(path), quoted_input(m.mode), quoted_input(m.mode)));
  }
  if (m.step >= kMaxSteps) {
    throw InputError(fmt::format(
        "--resume {}: says it was saved after step {}, and a run has at most {} steps: pass a "
        "checkpoint written by `ddpbench run --checkpoint-every N`",
        quoted_input(path), m.step, kMaxSteps));
  }
  if (m.step >= setup.steps) {
    throw InputError(fmt::format(
        "--resume {}: saved after step {}, and this run ends at --steps {}: pass --steps larger "
        "than {} to train on from it",
        quoted_input(path), m.step, setup.steps, m.step));
  }
  if (!m.ddp_buckets.empty()) {
    // Checked here, in the parent, so that a layout that does not fit is one line and exit 2
    // rather than every rank failing as it builds its engine.
    const auto reduced = static_cast<int64_t>(modes::trained_parameters(model).tensors.size());
    modes::ddp::check_bucket_layout(m.ddp_buckets, reduced, "--resume " + quoted_input(path));
  }
  if (plan.locate(m.step).epoch != m.epoch) {
    throw InputError(fmt::format(
        "--resume {}: saved in epoch {}, and this run's plan puts step {} in epoch {}: the "
        "dataset or --drop-last differs; pass the {}--drop-last setting the checkpoint's run "
        "trained with",
        quoted_input(path), m.epoch, m.step, plan.locate(m.step).epoch,
        setup.spec->reads_data_dir ? "--data-dir and " : "scenario keys and "));
  }
  if (setup.fault && setup.fault->step < m.step) {
    throw InputError(fmt::format(
        "--inject-fault step {} comes before the resumed step {}: pick a step from {} on",
        setup.fault->step, m.step, m.step));
  }
  return c;
}

}  // namespace ddpbench::run
