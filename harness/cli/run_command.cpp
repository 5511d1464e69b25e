// run_command.cpp — see run_command.h. Order matters for "nothing half-written": every input is
// validated and --out is proven writable before any training, and files are committed together
// only after every mode finished.
#include "cli/run_command.h"

#include <torch/torch.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "cli/output_dir.h"
#include "cli/run_context.h"
#include "data/batch_plan.h"
#include "cli/validators.h"
#include "errors.h"
#include "modes/single/single_trainer.h"
#include "reports/console_reporter.h"
#include "reports/json_reporter.h"
#include "scenarios/training_recipe.h"

namespace ddpbench::cli {
namespace {

constexpr const char* kKnownModes = "single";

std::string describe_optimizer(const scenarios::OptimizerSpec& o) {
  std::string s = fmt::format("SGD(lr={}", o.lr);
  if (o.momentum != 0) s += fmt::format(", momentum={}", o.momentum);
  if (o.dampening != 0) s += fmt::format(", dampening={}", o.dampening);
  if (o.nesterov) s += ", nesterov=True";
  if (o.weight_decay != 0) s += fmt::format(", weight_decay={}", o.weight_decay);
  return s + ")";
}

void validate_modes(const std::vector<std::string>& modes) {
  if (modes.empty()) throw InputError(fmt::format("--modes is empty: pass one of {}", kKnownModes));
  for (const auto& m : modes) {
    if (m != "single") {
      throw InputError(
          fmt::format("unknown mode '{}' in --modes: this version runs {}", m, kKnownModes));
    }
  }
}

reports::SamplerRecord sampler_record(const data::DistributedSampler& s) {
  const auto& o = s.options();
  return {o.dataset_size, o.num_replicas, o.shuffle,     o.drop_last,        o.seed,
          s.num_samples(), s.total_size(), s.padded_count(), s.dropped_count()};
}

}  // namespace

CLI::App* add_run_command(CLI::App& app, RunCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("run", "Train a scenario in the selected modes and report");
  cmd->add_option("--scenario", o.scenario, "Scenario name (see `ddpbench list`)");
  cmd->add_option("--modes", o.modes, "Comma-separated modes (single)")->delimiter(',');
  cmd->add_option("--steps", o.steps, "Training steps (default: the scenario's)")
      ->check(integer_at_least(1));
  cmd->add_option("--batch-size", o.batch_size, "Global batch size (default: the scenario's)")
      ->check(integer_at_least(1));
  cmd->add_option("--seed", o.seed, "Seed for init, shuffle and augmentation")
      ->check(integer_at_least(0));
  cmd->add_option("--dtype", o.dtype, "float32 or float64")
      ->check(CLI::IsMember({"float32", "float64"}));
  cmd->add_option("--data-dir", o.data_dir, "Dataset directory (default: the scenario's data)");
  cmd->add_option("--out", o.out, "Output directory for report.json and state files");
  cmd->add_option("--threads", o.threads, "Intra-op threads (default: all cores)")
      ->check(integer_at_least(1));
  return cmd;
}

int run_run_command(const RunCommandOptions& o, const scenarios::ScenarioRegistry& registry,
                    const std::vector<std::string>& argv) {
  const scenarios::ScenarioSpec& spec = registry.get(o.scenario);
  validate_modes(o.modes);
  const int64_t steps = o.steps > 0 ? o.steps : spec.steps;
  const int64_t batch = o.batch_size > 0 ? o.batch_size : spec.global_batch;
  const int64_t seed = o.seed >= 0 ? o.seed : spec.seed;
  const at::ScalarType dtype = o.dtype == "float64" ? at::kDouble : at::kFloat;
  if (!o.data_dir.empty() && !std::filesystem::is_directory(o.data_dir)) {
    throw InputError(fmt::format("--data-dir {}: no such directory", o.data_dir));
  }
  const scenarios::BuildRequest request{seed, o.data_dir};
  if (spec.unavailable_reason) {
    if (auto reason = spec.unavailable_reason(request)) {
      fmt::print(stderr, "ddpbench: skipped scenario {}: {}\n", spec.name, *reason);
      return kExitOk;
    }
  }
  OutputDir out(o.out);
  const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  const int64_t threads = o.threads > 0 ? o.threads : cores;
  torch::set_num_threads(static_cast<int>(threads));

  scenarios::ScenarioInstance instance = scenarios::instantiate(spec, request);
  const int64_t world_size = 1;
  const data::GlobalBatchPlan plan(
      {instance.dataset->size(), world_size, spec.shuffle, seed, spec.sampler_drop_last}, batch);
  const auto& sampler = plan.sampler();

  fmt::print("{} — run {}\n", version_line(), spec.name);
  fmt::print("scenario  {}: {}, {}, {}\n", spec.name, spec.model_name,
             scenarios::loss_name(spec.loss), describe_optimizer(spec.optimizer));
  fmt::print("data      {}; shuffle={} seed={}\n", instance.dataset->describe(), spec.shuffle, seed);
  fmt::print("plan      global batch {} = {} rank(s) x {}, {} steps/epoch, {} padded / {} dropped "
             "samples per epoch\n",
             batch, world_size, plan.local_batch(), plan.steps_per_epoch(), sampler.padded_count(),
             sampler.dropped_count());
  fmt::print("modes     {}; {} steps, {}, {} thread(s)\n", fmt::join(o.modes, ","), steps, o.dtype,
             threads);
  std::fflush(stdout);

  reports::RunReport report;
  report.context = collect_context(argv);
  report.config = {spec.name,
                   spec.model_name,
                   instance.dataset->describe(),
                   scenarios::loss_name(spec.loss),
                   describe_optimizer(spec.optimizer),
                   o.modes,
                   steps,
                   batch,
                   plan.local_batch(),
                   world_size,
                   plan.steps_per_epoch(),
                   seed,
                   threads,
                   o.dtype,
                   o.data_dir,
                   sampler_record(sampler)};

  const modes::SingleTrainResult single = modes::train_single(spec, instance, plan, {steps, dtype});
  const std::vector<char> state = modes::pickle_state(single.final_state);
  out.stage("state_single.pt", std::string_view(state.data(), state.size()));
  report.results.push_back({"single", 1, single.losses, single.step_seconds, "state_single.pt"});

  const reports::JsonReporter json;
  out.stage(json.file_name(), json.render(report));
  out.commit();
  fmt::print("\n{}", reports::ConsoleReporter().render(report));
  fmt::print("wrote {}/report.json and state files\n", out.path());
  return kExitOk;
}

}  // namespace ddpbench::cli
