// run_options.cpp — see run_options.h: the rows written back as words, for a child's command line
// and for the options report.json records.
#include "requests/run_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ddpbench::requests {
namespace {

// One row as a command line spells it.
struct SpelledRow {
  RunOption row;
  std::vector<std::string> words;  // {} for a flag left off
};

// Spells every row of one request: a bool flag is its name or nothing, an on/off bool its word,
// anything else the flag and its value's text (nothing for an empty text).
struct Speller {
  std::vector<SpelledRow>& out;

  template <typename T>
  void operator()(RunOption&& row, const T& field) {
    std::vector<std::string> words;
    const std::string flag = primary_flag(row);
    std::string text = option_text(row, field);
    if (!text.empty()) {
      // --checkpoint-prefix '' is a choice: spelled only when it is not the empty one.
      words = {flag, std::move(text)};
    } else if constexpr (std::is_same_v<T, bool>) {
      if (field) words = {flag};  // a plain flag takes no value
    }
    out.push_back({std::move(row), std::move(words)});
  }
};

std::vector<SpelledRow> spelled(const RunRequest& request) {
  std::vector<SpelledRow> rows;
  Speller speller{rows};
  run_options(speller, request);
  return rows;
}

// The rows of `request` a child must be given: those written always, those given, and those
// that differ from a fresh request's.
std::vector<SpelledRow> rows_to_write(const RunRequest& request) {
  const std::vector<SpelledRow> mine = spelled(request);
  const std::vector<SpelledRow> fresh = spelled(RunRequest{});
  std::vector<SpelledRow> out;
  for (size_t i = 0; i < mine.size(); ++i) {
    const RunOption& row = mine[i].row;
    if (row.write_back == WriteBack::kByCommand || mine[i].words.empty()) continue;
    const bool set = row.write_back == WriteBack::kAlways ||
                     (row.given ? request.*row.given : mine[i].words != fresh[i].words);
    if (set) out.push_back(mine[i]);
  }
  return out;
}

// Collects the rows that set scenario keys.
struct KeyCollector {
  std::vector<KeyFlag>& out;

  template <typename T>
  void operator()(RunOption&& row, const T& field) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!row.scenario_key.empty()) out.push_back({primary_flag(row), row.scenario_key, field});
    }
  }
};

}  // namespace

std::string option_text(const std::string& v) { return v; }
std::string option_text(int64_t v) { return fmt::format("{}", v); }
std::string option_text(double v) { return fmt::format("{}", v); }  // shortest round-trip form
std::string option_text(DeviceChoice v) { return device_name(v); }
std::string option_text(ComparisonChoice v) { return comparison_name(v); }
std::string option_text(const std::vector<std::string>& v) {
  return fmt::format("{}", fmt::join(v, ","));
}

std::vector<KeyFlag> key_flags(const RunRequest& r) {
  std::vector<KeyFlag> flags;
  KeyCollector collect{flags};
  run_options(collect, r);
  return flags;
}

std::vector<std::string> command_line(const RunRequest& r) {
  // A file names its base (and --config excludes --scenario).
  std::vector<std::string> a = {"ddpbench", "run"};
  a.insert(a.end(), {r.config.empty() ? "--scenario" : "--config",
                     r.config.empty() ? r.scenario : r.config});
  for (const SpelledRow& s : rows_to_write(r)) a.insert(a.end(), s.words.begin(), s.words.end());
  // After "--", so that an override's value reads as a value even when it starts with '-'.
  if (!r.overrides.empty()) {
    a.emplace_back("--");
    a.insert(a.end(), r.overrides.begin(), r.overrides.end());
  }
  return a;
}

std::vector<std::string> recorded_options(const RunRequest& r) {
  std::vector<std::string> options;
  for (const SpelledRow& s : rows_to_write(r)) {
    if (s.row.report == kReportOptions)
      options.push_back(fmt::format("{}", fmt::join(s.words, " ")));
  }
  return options;
}

}  // namespace ddpbench::requests
