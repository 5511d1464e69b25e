// history_inputs.h — the runs of `ddpbench history` and `gate --history`, read in order: run
// folders or report.json files as given, or one folder of them (sorted by name), or the list an
// --order file gives. Each is labelled by its folder's (or file's) name, the commit it measured.
#pragma once

#include <string>
#include <vector>

#include "compare/report_history.h"

namespace ddpbench::commands {

// Throws InputError for a run that cannot be read (naming it and the fix; a failed run's folder
// named as one, Note [A folder without a report]) or an empty series. In one folder of runs, a
// failed run's folder (failure.json, no report) is left out, and `left_out` (if given) says so.
std::vector<compare::LabelledReport> load_history(const std::vector<std::string>& runs,
                                                  const std::string& order_file,
                                                  const std::string& command,
                                                  std::vector<std::string>* left_out = nullptr);

}  // namespace ddpbench::commands
