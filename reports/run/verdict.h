// verdict.h — the one function that decides PASS. `run` calls it to set a report's verdict and
// exit code, `report` and `gate` call it on every report they read, and refuse a report whose
// stored statuses or verdict differ from what its numbers say.
//
// Note [Recomputable verdicts]
// A check is a set of numbers, not a word: how many items it compared, how many fell outside its
// limit (and how many of those the scenario declares divergent, with a reason), the worst error
// in the check's own measure and the limit that error is held to, and the worst absolute
// difference with the magnitude of the reference it was measured against. A status is a function
// of those numbers (check_status); a run's verdict is a function of its checks, its losses and
// its first divergence (run_verdict). Nothing that was not compared can pass: a check of zero
// items fails, a run with no check is kNotJudged. Prose (`detail`) carries only the reason of a
// divergence or what differs; the counts shown to people are rendered from the numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/run/run_record.h"

namespace ddpbench::reports {

// Note [Rounding floor measured on the model] (compare/rounding_floor.h): an item beyond its
// check's fixed limit passes within kFloorMultiple x the rounding floor measured for it.
inline constexpr double kFloorMultiple = 4;

// Note [Bisect's answer counts]: --bisect re-runs a failing float32 configuration in float64. When
// the mode's float32 differences vanish there (its float64 re-run, whose checks the first
// divergence keeps as float64_checks, compared gradients and failed nothing), they were float32
// rounding that even the measured floor (Note [Rounding floor measured on the model]) could not
// tell apart: each such failing check is `rounding`, which passes the run, with the cause named.
// Only checks with a size count (an exact check failing is never rounding), and the float64
// numbers are recomputed like every other: a re-run that persists, broke, or judged nothing
// leaves the failures failures.
bool float64_passes(const DivergenceRecord& first);

// The status `check`'s numbers give, with `first` the mode's first divergence (a check named
// there failed, whatever its numbers, unless float64_passes(first) makes it rounding).
CheckStatus check_status(const CheckRecord& check, const DivergenceRecord& first);

// Note [What a mode was judged against]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A PASS says what it was earned against. Each check's row (kStageSpecs' basis) says what it
// compares the mode with: the exact reference, ddp in the same run (matches_ddp), the mode's own
// ranks with each other, a rule, the evaluation pass. A mode with no check against the reference
// or ddp was judged for consistency only: its ranks agree, and a fault that every rank applies
// alike (a wrong average) passes such checks, so the verdict line and every report say so
// ("ddp: consistent across ranks, not compared with a reference: add single to --modes"), never a
// bare PASS. And a mode is judged at a step only where a per-step check against a reference
// compared something there (steps_compared): a run whose later steps compared nothing (every
// item past what the precision resolves, Note [Rounding floor measured on the model]) judged
// only its first steps, and is NOT JUDGED, with the steps it could not judge named.
struct ModeScope {
  bool judged = false;     // it has a check that judged something (not only not_comparable)
  bool reference = false;  // a check against the exact reference
  bool ddp = false;        // a check against ddp in the same run
  int64_t checked_steps = 0;
  std::vector<int64_t> unjudged_steps;  // checked steps no per-step reference check compared at
};
ModeScope scope_of(const RunReport& report, const ModeResult& result);

// What a judged mode's verdict rests on when it is less than a reference at every checked step,
// as one clause ("ddp: consistent across ranks, not compared with a reference: add single to
// --modes"); "" when the mode was compared with a reference at every step, or not judged at all.
std::string describe_scope(const RunReport& report, const ModeResult& result);
// The verdict as every format prints it: "PASS", "PASS (ddp: consistent across ranks, ...)",
// "FAIL", "NOT JUDGED: ...".
std::string verdict_text(const RunReport& report);

// kFail when any check fails, a judged mode's loss is not finite, or a first divergence is
// recorded that float64_passes does not explain; kNotJudged when no check ran, every check was
// not_comparable, or a mode judged against a reference has a checked step none of its per-step
// checks compared anything at (Note [What a mode was judged against]); else kPass.
Verdict run_verdict(const RunReport& report);

// The fault in a record's numbers as a sentence naming the field (path `where`, e.g.
// "results[1].checks[0]"), or "" when the record is consistent.
std::string check_inconsistency(const CheckRecord& check, const std::string& where);

// Throws InputError naming the field when a stored status or the stored verdict differs from
// what the numbers give, or the numbers contradict each other (was the file edited?).
void require_recomputed(const RunReport& report);

// "2 of 6 items outside atol 1e-05 + rtol 1.3e-06 * |ref|", rendered from the numbers: what
// every reporter shows for a check.
std::string describe_rule(const CheckRecord& check);
std::string describe_counts(const CheckRecord& check);

}  // namespace ddpbench::reports
