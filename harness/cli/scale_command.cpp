// scale_command.cpp — see scale_command.h.
#include "cli/scale_command.h"

#include <fmt/format.h>

#include <filesystem>

#include "cli/output_dir.h"
#include "cli/report_file.h"
#include "cli/validators.h"
#include "errors.h"
#include "launch/child_process.h"
#include "reports/console_reporter.h"
#include "reports/reporter.h"

namespace ddpbench::cli {
namespace fs = std::filesystem;

CLI::App* add_scale_command(CLI::App& app, ScaleCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("scale", "Scaling sweep over world sizes (perf only)");
  cmd->add_option("--scenario", o.scenario, "Scenario name");
  cmd->add_option("--gpus", o.gpus, "World sizes, e.g. 1,2,4,8")
      ->delimiter(',')
      ->check(integer_at_least(1));
  cmd->add_option("--modes", o.modes, "Modes to time: ddp, dp")
      ->delimiter(',')
      ->check(CLI::IsMember({"ddp", "dp"}));
  cmd->add_option("--steps", o.steps, "Timed steps per point")->check(integer_at_least(1));
  cmd->add_option("--warmup", o.warmup, "Warm-up steps per point")->check(integer_at_least(0));
  cmd->add_flag("--strong", o.strong, "Strong scaling (fixed global batch)");
  cmd->add_option("--batch-size", o.batch_size,
                  "Weak: per-device batch; strong: global batch (default: from the scenario)")
      ->check(integer_at_least(1));
  cmd->add_option("--backend", o.backend, "Collectives: gloo, nccl")
      ->check(CLI::IsMember({"gloo", "nccl"}));
  cmd->add_option("--dtype", o.dtype, "float32 or float64")
      ->check(CLI::IsMember({"float32", "float64"}));
  cmd->add_option("--out", o.out, "Output directory for the merged report");
  return cmd;
}

int run_scale_command(const ScaleCommandOptions& o, const scenarios::ScenarioRegistry& registry) {
  const scenarios::ScenarioSpec& spec = registry.get(o.scenario);
  const int64_t max_k = *std::max_element(o.gpus.begin(), o.gpus.end());
  const int64_t batch = o.batch_size > 0 ? o.batch_size
                        : o.strong       ? spec.global_batch
                                         : std::max<int64_t>(1, spec.global_batch / max_k);
  if (o.strong) {
    for (int64_t k : o.gpus) {
      if (batch % k != 0) {
        throw InputError(
            fmt::format("strong scaling: global batch {} is not divisible by {} ranks; "
                        "pass --batch-size as a multiple of every world size",
                        batch, k));
      }
    }
  }
  OutputDir out(o.out);
  std::string tmp = (fs::temp_directory_path() / "ddpbench-scale-XXXXXX").string();
  if (mkdtemp(tmp.data()) == nullptr)
    throw std::runtime_error("cannot create a temporary directory");
  struct Cleanup {
    std::string dir;
    ~Cleanup() { fs::remove_all(dir); }
  } cleanup{tmp};

  reports::RunReport merged;
  bool have_baseline = false;
  for (int64_t k : o.gpus) {
    const int64_t global = o.strong ? batch : batch * k;
    const std::string dir = fmt::format("{}/k{}", tmp, k);
    std::vector<std::string> args = {"/proc/self/exe",
                                     "run",
                                     "--scenario",
                                     o.scenario,
                                     "--gpus",
                                     std::to_string(k),
                                     "--batch-size",
                                     std::to_string(global),
                                     "--steps",
                                     std::to_string(o.steps),
                                     "--warmup",
                                     std::to_string(o.warmup),
                                     "--perf-only",
                                     "--backend",
                                     o.backend,
                                     "--out",
                                     dir,
                                     "--modes",
                                     "single," + fmt::format("{}", fmt::join(o.modes, ","))};
    if (o.strong) args.push_back("--strong");
    if (!o.dtype.empty()) args.insert(args.end(), {"--dtype", o.dtype});
    fmt::print("scale: K={} (global batch {}) ...\n", k, global);
    std::fflush(stdout);
    const int code = launch::run_child(args);
    if (code != 0) {
      throw WorkerFailure(fmt::format("scale: the K={} point failed with exit code {}", k, code));
    }
    reports::RunReport point = read_report_file(dir + "/report.json");
    if (merged.results.empty()) {
      merged.context = point.context;
      merged.config = point.config;
      merged.config.world_size = max_k;
    }
    for (auto& r : point.results) {
      if (r.mode == "single") {
        if (have_baseline) continue;  // weak scaling: every point's baseline is the same batch
        have_baseline = true;
      }
      r.state_file.clear();
      merged.results.push_back(std::move(r));
    }
  }
  // One baseline for the whole sweep: recompute every point's efficiency against it.
  double baseline = 0;
  for (const auto& r : merged.results) {
    if (r.mode == "single") baseline = r.throughput.samples_per_s;
  }
  for (auto& r : merged.results) {
    if (r.mode != "single" && baseline > 0) {
      r.scaling_efficiency =
          r.throughput.samples_per_s / (static_cast<double>(r.world_size) * baseline);
    }
  }
  for (const auto& reporter : reports::file_reporters()) {
    out.stage(reporter->file_name(), reporter->render(merged));
  }
  out.commit();
  fmt::print("\n{}", reports::ConsoleReporter().render(merged));
  fmt::print("wrote {}/report.{{json,csv,junit.xml,md,html}}\n", out.path());
  return kExitOk;
}

}  // namespace ddpbench::cli
