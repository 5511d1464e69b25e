// perf_repeats.cpp — see perf_repeats.h.
#include "run/perf_repeats.h"

#include <fmt/format.h>

#include <cstdio>

#include "errors.h"
#include "launch/child_process.h"
#include "modes/common/fault_injection.h"
#include "output/report_file.h"
#include "output/scratch_dir.h"

namespace ddpbench::run {

requests::RunRequest repeat_twin(const requests::RunRequest& request, const std::string& out) {
  requests::RunRequest twin = request;
  twin.repeats = 1;
  twin.check_only = false;
  twin.perf_only = true;
  twin.quiet = true;
  twin.export_batches = false;
  twin.trace = false;
  twin.bisect = false;
  twin.checkpoint_every = 0;
  twin.resume.clear();
  // A fault that acts on the timed steps (a slowdown) is part of what is measured; one that acts
  // on the checked steps has nothing to act on in a perf-only twin.
  if (!request.inject_fault.empty() &&
      !modes::acts_on_timed_steps(modes::parse_fault(request.inject_fault))) {
    twin.inject_fault.clear();
  }
  twin.out = out;
  return twin;
}

void run_perf_repeats(const requests::RunRequest& request, int64_t repeats,
                      const requests::CommandLineOf& command_line,
                      std::vector<training::ModeOutcome>& outcomes) {
  if (repeats <= 1) return;
  const output::ScratchDir scratch("repeats");
  for (int64_t k = 2; k <= repeats; ++k) {
    if (!request.quiet) {
      fmt::print("repeat {}/{}: the perf phase again in fresh processes ...\n", k, repeats);
      std::fflush(stdout);
    }
    const requests::RunRequest twin =
        repeat_twin(request, fmt::format("{}/repeat{}", scratch.path(), k));
    const int code = launch::run_self(command_line(twin), scratch.path());
    if (code != kExitOk) {
      throw WorkerFailure(fmt::format(
          "repeat {} of {} (a fresh `ddpbench run --perf-only` of this configuration) exited "
          "with code {}: its timings are missing, so the run has no repeats to report",
          k, repeats, code));
    }
    const reports::RunReport twin_report = output::read_report_file(twin.out + "/report.json");
    for (training::ModeOutcome& o : outcomes) {
      if (!o.throughput_defined()) continue;
      const reports::ModeResult* match = nullptr;
      for (const auto& r : twin_report.results) {
        if (r.mode == o.mode && r.world_size == o.world_size) match = &r;
      }
      if (match == nullptr || match->throughput.repeats.empty()) {
        throw WorkerFailure(fmt::format("repeat {} of {} timed no {} x{}", k, repeats,
                                        modes::mode_name(o.mode), o.world_size));
      }
      // The child measured its own load around the mode (its repeat 1).
      o.more_repeats.push_back(match->throughput.repeats.front());
    }
  }
}

}  // namespace ddpbench::run
