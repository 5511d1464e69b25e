// finish_run.cpp — see finish_run.h. The configuration block is run/config_record's, each mode's
// judging run/judge_mode's; here: the files each mode leaves, the verdict, and one write.
#include "run/finish_run.h"

#include <fmt/format.h>

#include <stdexcept>

#include "compare/report_audit.h"
#include "errors.h"
#include "modes/common/model_state.h"
#include "output/environment_block.h"
#include "output/write_reports.h"
#include "reports/run/verdict.h"
#include "run/config_record.h"
#include "run/judge_mode.h"
#include "run/trace_output.h"

namespace ddpbench::run {
namespace {

// Stages `o`'s final state (named in `r`) and checkpoints; whether it had checkpoints.
bool stage_mode_files(const training::ModeOutcome& o, reports::ModeResult& r,
                      output::OutputDir& out) {
  if (o.trace.final_state.empty()) {
    r.state_file.clear();  // --perf-only: no checked trajectory, no final state
  } else {
    const std::vector<char> state = modes::pickle_state(o.trace.final_state);
    out.stage(r.state_file, std::string_view(state.data(), state.size()));
  }
  // --checkpoint-every: committed with the report, so a failed run leaves none half-written.
  for (const training::SavedCheckpoint& c : o.checkpoints) {
    out.stage(fmt::format("checkpoint_{}_step{}.pt", modes::mode_name(o.mode), c.step),
              std::string_view(c.bytes.data(), c.bytes.size()));
  }
  return !o.checkpoints.empty();
}

// The verdict is the one function report and gate recompute (reports/run/verdict.h); with --bisect, a
// failing run's float64 re-run may make float32 failures rounding (Note [Bisect's answer counts]).
void decide(reports::RunReport& report, const training::RunSetup& setup,
            const RunDescription& run) {
  report.verdict = reports::run_verdict(report);
  if (report.verdict != reports::Verdict::kFail || !setup.bisect) return;
  if (!run.bisect) {
    fmt::print(stderr,
               "ddpbench: --bisect runs from the launching ddpbench process only; under an "
               "external launcher, re-run with --dtype float64 instead\n");
    return;
  }
  run.bisect(report);
  for (reports::ModeResult& r : report.results) {
    for (reports::CheckRecord& c : r.checks)
      c.status = reports::check_status(c, r.first_divergence);
  }
  report.verdict = reports::run_verdict(report);
}

// `report` and `gate` refuse a report its configuration contradicts (Note [What a report's
// configuration implies]); one ddpbench wrote itself must never be such: a disagreement is
// ddpbench's own bug, and no report is written.
void audit_own_report(const reports::RunReport& report) {
  try {
    compare::audit_report(report);
  } catch (const InputError& e) {
    throw std::logic_error(
        fmt::format("ddpbench's own report fails the audit `report` applies: {}", e.what()));
  }
}

}  // namespace

int finish_run(const training::RunSetup& setup, const runtime::ExecutionContext& context,
               const RunDescription& run, std::vector<training::ModeOutcome> outcomes,
               const std::vector<training::ReferenceOutcome>& references, output::OutputDir& out) {
  reports::RunReport report;
  report.context = output::collect_context(run.argv, context);
  report.config = config_record(setup, context.threads(), run);
  ModeJudge judge(setup, run, outcomes, references);
  bool wrote_checkpoints = false;
  for (const training::ModeOutcome& o : outcomes) {
    reports::ModeResult r = judge.judge(o, out);
    wrote_checkpoints |= stage_mode_files(o, r, out);
    report.results.push_back(std::move(r));
  }
  stage_trace(setup, outcomes, report, out);
  decide(report, setup, run);
  audit_own_report(report);
  output::write_reports(report, out,
                        wrote_checkpoints ? ", state files and checkpoints" : " and state files");
  return report.verdict == reports::Verdict::kFail ? kExitCheckFailed : kExitOk;
}

}  // namespace ddpbench::run
