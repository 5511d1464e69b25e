// execute_history.h — `ddpbench history RUN...`, once its flags are parsed: read the series
// (history_inputs.h), judge every point over it (compare/report_history.h), print the summary and
// write history.txt, history.csv and history.html; exit 1 when a point is a regression.
#pragma once

#include "requests/run_request.h"

namespace ddpbench::commands {

int execute_history(const requests::HistoryRequest& request);

}  // namespace ddpbench::commands
