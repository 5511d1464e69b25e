// execute_diff.cpp — see execute_diff.h.
#include "commands/execute_diff.h"

#include <fmt/format.h>

#include <filesystem>

#include "errors.h"
#include "input_file.h"
#include "output/output_dir.h"
#include "output/report_file.h"
#include "quoted_input.h"
#include "reports/diff/diff_reporters.h"
#include "scenarios/content_hash.h"
#include "trace/trace_diff.h"
#include "trace/trace_file.h"

namespace ddpbench::commands {
namespace {

struct Side {
  trace::TraceFile file;
  reports::DiffSide side;
};

std::string sha256_of(const std::vector<char>& bytes) {
  return scenarios::sha256_hex(std::string_view(bytes.data(), bytes.size()));
}

// A run folder's trace is the file its report.json names, with the hash it names: a trace
// replaced or edited after the run is refused, not diffed. The file is read once, for its hash and
// its content.
Side load_side(const std::string& path) {
  Side s;
  s.side.path = path;
  std::vector<char> bytes;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    const std::string report_path = (std::filesystem::path(path) / "report.json").string();
    const reports::RunReport report = output::read_report_file(report_path);
    if (report.config.trace_file.empty()) {
      throw InputError(fmt::format(
          "diff {}: this run wrote no trace; re-run it with --trace (or pass a trace.pt)",
          quoted_input(path)));
    }
    s.side.trace = (std::filesystem::path(path) / report.config.trace_file).string();
    bytes = read_input_file<std::vector<char>>(s.side.trace, "diff", "re-run the run with --trace");
    s.side.sha256 = sha256_of(bytes);
    if (s.side.sha256 != report.config.trace_sha256) {
      throw InputError(fmt::format(
          "diff {}: its SHA-256 is not the one {} names (the file was replaced or edited after "
          "the run); re-run the run with --trace",
          quoted_input(s.side.trace), quoted_input(report_path)));
    }
  } else {
    // A folder or a run's trace.pt that is not there: say what the folder is (Note [A folder
    // without a report], output/report_file.cpp), not "no such file".
    const std::string why = output::why_no_results(path);
    if (!why.empty()) throw InputError("diff: " + why);
    s.side.trace = path;
    bytes = read_input_file<std::vector<char>>(
        path, "diff", "pass a run folder or a trace.pt of `ddpbench run --trace`");
    s.side.sha256 = sha256_of(bytes);
  }
  s.file = trace::read_trace(bytes, s.side.trace);
  return s;
}

}  // namespace

int execute_diff(const requests::DiffRequest& request) {
  const Side a = load_side(request.a);
  const Side b = load_side(request.b);
  // Never into a folder another command wrote, such as run A's own (Note [A command replaces only
  // its own results], output_dir.cpp).
  output::OutputDir out(request.out, output::OutputPolicy::kOwnFolder, "diff");
  reports::DiffRecord r =
      trace::diff_traces(a.file, b.file, {request.expect == requests::DiffExpectation::kIdentical});
  r.a = a.side;
  r.b = b.side;
  const std::string text = reports::render_diff_text(r);
  fmt::print("{}", text);
  out.stage(reports::kDiffTextFile, text);
  out.stage(reports::kDiffJsonFile, reports::render_diff_json(r));
  out.stage(reports::kDiffHtmlFile, reports::render_diff_html(r));
  out.commit();
  fmt::print("diff: wrote {}, {} and {} to {}\n", reports::kDiffTextFile, reports::kDiffJsonFile,
             reports::kDiffHtmlFile, out.path());
  return r.failed ? kExitCheckFailed : kExitOk;
}

}  // namespace ddpbench::commands
