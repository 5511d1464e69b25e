// trace_entry.cpp — see trace_entry.h.
#include "modes/common/trace_entry.h"

#include <stdexcept>

namespace ddpbench::modes {

const char* trace_phase_name(TracePhase phase) {
  for (const TracePhaseRow& row : kTracePhases) {
    if (row.phase == phase) return row.name;
  }
  return "?";
}

TracePhase trace_phase_named(const std::string& name) {
  for (const TracePhaseRow& row : kTracePhases) {
    if (name == row.name) return row.phase;
  }
  throw std::invalid_argument("no trace phase is named '" + name + "'");
}

}  // namespace ddpbench::modes
