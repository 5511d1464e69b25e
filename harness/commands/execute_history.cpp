// execute_history.cpp — see execute_history.h.
#include "commands/execute_history.h"

#include <fmt/format.h>

#include "commands/history_inputs.h"
#include "compare/report_history.h"
#include "errors.h"
#include "output/output_dir.h"
#include "reports/history/history_reporters.h"

namespace ddpbench::commands {

int execute_history(const requests::HistoryRequest& request) {
  std::vector<std::string> left_out;
  const std::vector<compare::LabelledReport> series =
      load_history(request.runs, request.order, "history", &left_out);
  reports::HistoryReport r =
      compare::judge_report_history(series, request.max_slowdown, request.lookback);
  r.notes = left_out;
  output::OutputDir out(request.out, output::OutputPolicy::kOwnFolder, "history");
  const std::string text = reports::render_history_text(r);
  fmt::print("{}", text);
  out.stage(reports::kHistoryTextFile, text);
  out.stage(reports::kHistoryCsvFile, reports::render_history_csv(r));
  out.stage(reports::kHistoryHtmlFile, reports::render_history_html(r));
  out.commit();
  fmt::print("history: wrote {}, {} and {} to {}\n", reports::kHistoryTextFile,
             reports::kHistoryCsvFile, reports::kHistoryHtmlFile, out.path());
  return r.regression ? kExitCheckFailed : kExitOk;
}

}  // namespace ddpbench::commands
