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

#include <string>

#include "reports/run_record.h"

namespace ddpbench::reports {

// The status `check`'s numbers give, with `first` the mode's first divergence (a check named
// there failed, whatever its numbers).
CheckStatus check_status(const CheckRecord& check, const DivergenceRecord& first);

// kFail when any check fails, a judged mode's loss is not finite, or a first divergence is
// recorded; kNotJudged when no check ran; else kPass.
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
