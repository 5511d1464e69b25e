// divergence_text.h — the one sentence every report format uses for a mode's first divergence and
// for its reference (what the checks compared with and why), and the one way they write its
// scaling efficiency, so console, Markdown, HTML and JUnit say the same thing.
#pragma once

#include <string>

#include "reports/run/run_record.h"

namespace ddpbench::reports {

// "step 2, gradients of conv1.weight parted first (backward): 1.2e-03 > normalized error 2e-05";
// "" when nothing failed. Adds the --bisect verdict when there is one.
std::string describe_first_divergence(const DivergenceRecord& d);

// "vs exact reference: ..., lockstep": what a mode's checks compared it with.
std::string describe_reference(const ReferenceRecord& r);

// The evaluation pass in one sentence: "on <set>: accuracy ..., and what padding changed",
// "skipped: <reason>", or "" when it did not run (no check phase).
std::string describe_evaluation(const EvaluationRecord& e);

// "87.5%", or "-" when the mode has no scaling efficiency (the baseline, or nothing timed).
std::string describe_efficiency(const ModeResult& r);

// The run's arithmetic: "float32", or "float32, autocast bf16" under --amp.
std::string describe_precision(const RunConfig& c);

}  // namespace ddpbench::reports
