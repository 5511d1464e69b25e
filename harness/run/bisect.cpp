// bisect.cpp — see bisect.h.
#include "run/bisect.h"

#include <fmt/format.h>

#include <cstdio>

#include "launch/child_process.h"
#include "output/report_file.h"
#include "output/scratch_dir.h"
#include "reports/run/divergence_text.h"

namespace ddpbench::run {

requests::RunRequest float64_twin(const requests::RunRequest& request, bool lockstep,
                                  const std::string& out) {
  requests::RunRequest twin = request;
  twin.dtype = "float64";
  // float64 has no mixed precision (Note [Bisect under autocast]).
  twin.amp = "off";
  twin.grad_scaler_init.clear();
  twin.growth_interval.clear();
  twin.comparison =
      lockstep ? requests::ComparisonChoice::kLockstep : requests::ComparisonChoice::kFree;
  twin.check_only = true;
  twin.perf_only = false;
  twin.quiet = true;
  twin.export_batches = false;
  twin.trace = false;
  twin.bisect = false;
  twin.out = out;
  return twin;
}

reports::RunReport run_float64_twin(const requests::RunRequest& request, bool lockstep,
                                    const requests::CommandLineOf& command_line, int& exit_code) {
  const output::ScratchDir scratch("bisect");
  const requests::RunRequest twin = float64_twin(request, lockstep, scratch.path() + "/out");
  fmt::print("bisect: re-running the failing configuration in float64 ...\n");
  std::fflush(stdout);
  exit_code = launch::run_self(command_line(twin), scratch.path());
  if (exit_code != 0 && exit_code != 1) return {};
  return output::read_report_file(twin.out + "/report.json");
}

void annotate_bisect(reports::RunReport& report, const reports::RunReport& float64, int exit_code) {
  for (reports::ModeResult& r : report.results) {
    reports::DivergenceRecord& d = r.first_divergence;
    if (d.stage == reports::Stage::kNone) continue;
    const reports::ModeResult* twin = nullptr;
    for (const auto& t : float64.results) {
      if (t.mode == r.mode && t.world_size == r.world_size) twin = &t;
    }
    if (twin == nullptr) {
      d.bisect = "could not be decided";
      d.bisect_detail = fmt::format("the float64 re-run exited with code {} before judging {}",
                                    exit_code, reports::name_of(r.mode));
      continue;
    }
    if (twin->first_divergence.stage != reports::Stage::kNone) {
      d.bisect = "persists";
      d.bisect_detail = fmt::format("an algorithm difference, not rounding (float64: {})",
                                    reports::describe_first_divergence(twin->first_divergence));
      continue;
    }
    double worst_gradient = 0;
    for (const auto& c : twin->checks) {
      if (c.name == reports::Stage::kGradients) worst_gradient = c.max_abs_diff;
    }
    d.bisect = "vanishes";
    if (report.config.amp != "off") {
      // Not rounding the reference left out: the failure stands (Note [Bisect under autocast]).
      d.bisect_detail = fmt::format(
          "only under --amp {}: float64 without autocast passes every check (worst gradient "
          "difference {:.3e}), and the exact reference already rounds each rank's gradients as "
          "autocast does, so this is no rounding it leaves out: look at what the mode does under "
          "autocast (its weight casts, its GradScaler)",
          report.config.amp, worst_gradient);
      continue;
    }
    d.float64_checks = twin->checks;
    d.bisect_detail = fmt::format(
        "float32 rounding (float64 passes every check; worst gradient difference {:.3e})",
        worst_gradient);
  }
}

}  // namespace ddpbench::run
