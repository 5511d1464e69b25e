// resume.cpp — see resume.h.
#include "run/resume.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "errors.h"
#include "quoted_input.h"

namespace ddpbench::run {
namespace {

std::vector<char> read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw InputError(fmt::format(
        "--resume {}: no such file; pass a checkpoint written by `ddpbench run --checkpoint-every "
        "N` (checkpoint_<mode>_step<N>.pt in its --out)",
        quoted_input(path)));
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) {
    throw InputError(fmt::format("--resume {}: cannot read it", quoted_input(path)));
  }
  return bytes;
}

// One setting the checkpoint's run and this one must share.
template <typename T>
void require_same(const std::string& path, const char* flag, const T& saved, const T& here) {
  if (saved == here) return;
  throw InputError(fmt::format(
      "--resume {}: saved by a run with {} {}, and this run has {} {}: pass {} {} to continue "
      "its training",
      quoted_input(path), flag, saved, flag, here, flag, saved));
}

}  // namespace

std::shared_ptr<const modes::Checkpoint> load_resume(const std::string& path,
                                                     const training::RunSetup& setup,
                                                     const torch::nn::Module& model,
                                                     const data::GlobalBatchPlan& plan) {
  const std::vector<char> bytes = read_file(path);
  // The scenario before the tensors: another scenario's file would fail on its first key, which
  // says less.
  auto c = std::make_shared<modes::Checkpoint>(
      modes::parse_checkpoint(bytes, path, model, [&](const modes::CheckpointMeta& m) {
        require_same(path, "--scenario", m.scenario, setup.spec->name);
      }));
  const modes::CheckpointMeta& m = c->meta;
  require_same(path, "--seed", m.seed, setup.seed);
  require_same(path, "--batch-size", m.global_batch, setup.global_batch);
  require_same(path, "--gpus", m.world_size, setup.world_size);
  require_same(path, "--dtype", m.dtype, std::string(setup.dtype_name()));
  const std::optional<modes::ModeKind> mode = modes::parse_mode(m.mode);
  if (!mode || !setup.has_mode(*mode)) {
    throw InputError(fmt::format(
        "--resume {}: saved by mode {}, which this run does not have: add {} to --modes (the "
        "run's other modes start from its state too)",
        quoted_input(path), quoted_input(m.mode), quoted_input(m.mode)));
  }
  if (m.step < 1 || m.step >= setup.steps) {
    throw InputError(fmt::format(
        "--resume {}: saved after step {}, and this run ends at --steps {}: pass --steps larger "
        "than {} to train on from it",
        quoted_input(path), m.step, setup.steps, m.step));
  }
  if (plan.locate(m.step).epoch != m.epoch) {
    throw InputError(fmt::format(
        "--resume {}: saved in epoch {}, and this run's plan puts step {} in epoch {}: the "
        "dataset differs; pass the --data-dir the checkpoint's run trained on",
        quoted_input(path), m.epoch, m.step, plan.locate(m.step).epoch));
  }
  if (setup.fault && setup.fault->step < m.step) {
    throw InputError(fmt::format(
        "--inject-fault step {} comes before the resumed step {}: pick a step from {} on",
        setup.fault->step, m.step, m.step));
  }
  return c;
}

}  // namespace ddpbench::run
