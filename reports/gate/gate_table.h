// gate_table.h — a gate verdict as a table: aligned text for logs, or markdown for CI job
// summaries, after its notes (what the runs were judged against) and ending with the overall
// PASS/FAIL line. Its delta is the ratio of the two samples/s columns beside it.
#pragma once

#include <string>

#include "reports/gate/gate_record.h"

namespace ddpbench::reports {

std::string render_gate_table(const GateResult& result, bool markdown);

}  // namespace ddpbench::reports
