// run_options.h — every flag of `ddpbench run` and `scale`, declared once: one row per option
// (run_option.h) beside the RunRequest field that holds it. `run_options(v, request)` calls
// v(row, field) for each, in --help's order; from these rows come the CLI's flags and --help
// (cli/run_flags.cpp), a child's command line and the options report.json records
// (run_options.cpp), the scenario keys flags set (key_flags), and the flag reference
// (`ddpbench list --flags`, docs/flags.md). A new option is two edits: its field in RunRequest and
// its row in one of the *_rows.h groups; tests/unit/run_options_test.cpp holds every row to the
// report's fields.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "requests/machine_rows.h"
#include "requests/run_only_rows.h"
#include "requests/run_option.h"
#include "requests/run_request.h"
#include "requests/workload_rows.h"

namespace ddpbench::requests {

// Every row, in --help's order: the options `scale` shares with `run`, then `run`'s own.
template <typename V, typename R>
void run_options(V& v, R& r) {
  static_assert(std::is_same_v<std::remove_const_t<R>, RunRequest>);
  workload_options(v, r);
  training_options(v, r);
  machine_options(v, r);
  engine_options(v, r);
  step_options(v, r);
  run_only_options(v, r);
  output_options(v, r);
}

// A field's value as the text its flag takes: how a child's command line (command_line) and the
// flag reference (cli/flag_reference.cpp) spell it.
std::string option_text(const std::string& value);
std::string option_text(int64_t value);
std::string option_text(double value);
std::string option_text(DeviceChoice value);
std::string option_text(ComparisonChoice value);
std::string option_text(const std::vector<std::string>& value);
// The same for a row's field: an on/off bool as "on" or "off", a plain bool flag as "" (it takes
// no value).
template <typename T>
std::string option_text(const RunOption& row, const T& field) {
  if constexpr (std::is_same_v<T, bool>) {
    if (row.check.kind != OptionCheck::Kind::kOnOff) return "";
    return field ? "on" : "off";
  } else {
    return option_text(field);
  }
}

// A run flag that sets a scenario key, and its value here (empty: not given).
struct KeyFlag {
  std::string flag;  // "--input-shape"
  std::string key;   // "DATA.INPUT_SHAPE"
  const std::string& value;
};

// The rows of `r` that set scenario keys: the one list scenario_source() applies.
std::vector<KeyFlag> key_flags(const RunRequest& r);

// The command line that makes this binary execute `request` (argv[0] is only the name ps shows):
// how `scale`, --bisect and --repeats start a run as a child process. Only fields that differ
// from "unset" are written (and the rows written always), so the child applies the same defaults.
std::vector<std::string> command_line(const RunRequest& request);

// The options report.json records as given (config.options): "--flag value" for each row
// reported as kReportOptions whose field is set.
std::vector<std::string> recorded_options(const RunRequest& request);

}  // namespace ddpbench::requests
