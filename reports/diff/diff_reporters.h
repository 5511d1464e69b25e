// diff_reporters.h — a DiffRecord (`ddpbench diff`) in ddpbench's formats: the text summary the
// command prints (also diff.txt), diff.json and diff.html (a step x tensor map of the differences,
// the first divergence highlighted, the environment side by side; self-contained, in report.html's
// style). They only format.
#pragma once

#include <string>

#include "reports/diff/diff_record.h"

namespace ddpbench::reports {

inline constexpr const char* kDiffJsonFile = "diff.json";
inline constexpr const char* kDiffTextFile = "diff.txt";
inline constexpr const char* kDiffHtmlFile = "diff.html";

std::string render_diff_text(const DiffRecord& r);
std::string render_diff_json(const DiffRecord& r);
std::string render_diff_html(const DiffRecord& r);

// One difference in words: "step 2, ddp, gradient after the reduction of fc.weight: diverged
// (max |diff| 1.2e-05, max rel 5.0e-05, 420 ulps of Float; normalized 5.0e-05 > 2e-05)".
std::string describe_difference(const TensorDifference& d);
// The decision in one line: "IDENTICAL ...", "ROUNDING ...", "DIVERGED ...".
std::string diff_verdict_line(const DiffRecord& r);

}  // namespace ddpbench::reports
