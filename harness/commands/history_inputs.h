// history_inputs.h — the runs of `ddpbench history` and `gate --history`, read in order: run
// folders or report.json files as given, or one folder of them (sorted by name), or the list an
// --order file gives. Each is labelled by its folder's (or file's) name, the commit it measured.
#pragma once

#include <string>
#include <vector>

#include "compare/report_history.h"

namespace ddpbench::run {

// Throws InputError for a run that cannot be read (naming it and the fix) or an empty series.
std::vector<compare::LabelledReport> load_history(const std::vector<std::string>& runs,
                                                  const std::string& order_file,
                                                  const std::string& command);

}  // namespace ddpbench::run
