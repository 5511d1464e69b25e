// run_option.h — one row of the run options table (run_options.h): everything ddpbench says about
// a run flag besides the RunRequest field that holds it — its spelling, help, check, default as
// --help shows it, the scenario key it sets, where report.json records it, whether `scale` takes
// it and when a child's command line repeats it. Plain data (no CLI11, no torch): the CLI binds
// the rows to CLI11 (cli/run_flags.cpp), the engine reads them to write a child's command line and
// the options report.json records (run_options.cpp), `ddpbench list --flags` prints them as the
// flag reference (docs/flags.md).
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddpbench::requests {

struct RunRequest;

// An integer range without an upper bound (--help shows "INT>=lo").
inline constexpr long long kNoUpperBound = std::numeric_limits<long long>::max();

// How a flag's value is checked before the engine sees it.
struct OptionCheck {
  enum class Kind {
    kAny,           // as typed (the engine or the scenario key's parser checks it)
    kChoices,       // one of `choices`
    kOnOff,         // "on" or "off", for a bool field
    kIntegers,      // an integer in [lo, hi]
    kIntegerOneOf,  // one of `one_of` (`meaning` says what the number is)
    kPath,          // a path that may not be empty (`fix` says what to pass)
  };
  Kind kind = Kind::kAny;
  std::vector<std::string> choices;
  long long lo = 0, hi = 0;
  std::vector<long long> one_of;
  std::string meaning;    // kIntegerOneOf
  std::string fix;        // kPath
  std::string type_name;  // kAny: the value's name in --help ("INT", "NUMBER"); empty: CLI11's
};

// When command_line() writes a flag for a child process (scale's points, --bisect's twin, the
// perf repeats).
enum class WriteBack {
  kWhenSet,    // when the field differs from a fresh RunRequest's (or, with `given`, was given)
  kAlways,     // always, so that the child cannot fall back to a default of its own
  kByCommand,  // written by command_line() itself (--scenario / --config, the overrides)
};

// Where report.json records what an option did to the run.
inline constexpr const char* kReportArgv = "argv";  // only context.argv: no result depends on it
inline constexpr const char* kReportOptions = "options";  // config.options, as given

struct RunOption {
  // "--steps"; "--gpus,--world-size" adds an alias; a word without dashes is positional.
  std::string flag;
  std::string help;
  OptionCheck check;
  // --help's default where the field's first value is not what a run uses ("" shows none); unset:
  // the field's first value.
  std::optional<std::string> shown_default;
  // The scenario key the flag sets (DATA.INPUT_SHAPE); empty: none.
  std::string scenario_key;
  // The report.json field that records the value the run used: a config or context field
  // ("steps", "ddp.impl", "context.device"), kReportArgv, or kReportOptions (the default: a new
  // option is recorded and compared by `gate` without a field of its own).
  std::string report = kReportOptions;
  bool scale = true;  // `scale` takes it too (false: `run` only)
  WriteBack write_back = WriteBack::kWhenSet;
  // A RunRequest flag set when the option was given (its value may equal the default).
  bool RunRequest::*given = nullptr;
  // A flag this one may not be given with.
  std::string excludes;

  // Builders, so that a row of the table reads as one expression.
  RunOption&& integers(long long low, long long high) && {
    check.kind = OptionCheck::Kind::kIntegers;
    check.lo = low;
    check.hi = high;
    return std::move(*this);
  }
  RunOption&& one_of(std::vector<long long> values, std::string what) && {
    check.kind = OptionCheck::Kind::kIntegerOneOf;
    check.one_of = std::move(values);
    check.meaning = std::move(what);
    return std::move(*this);
  }
  RunOption&& choices(std::vector<std::string> names) && {
    check.kind = OptionCheck::Kind::kChoices;
    check.choices = std::move(names);
    return std::move(*this);
  }
  RunOption&& on_off() && {
    check.kind = OptionCheck::Kind::kOnOff;
    return std::move(*this);
  }
  RunOption&& path(std::string what_to_pass) && {
    check.kind = OptionCheck::Kind::kPath;
    check.fix = std::move(what_to_pass);
    return std::move(*this);
  }
  RunOption&& typed(std::string name) && {
    check.type_name = std::move(name);
    return std::move(*this);
  }
  RunOption&& shows(std::string default_text) && {
    shown_default = std::move(default_text);
    return std::move(*this);
  }
  RunOption&& key(std::string scenario) && {
    scenario_key = std::move(scenario);
    return std::move(*this);
  }
  RunOption&& reported_as(std::string field) && {
    report = std::move(field);
    return std::move(*this);
  }
  RunOption&& run_only() && {
    scale = false;
    return std::move(*this);
  }
  RunOption&& always_written() && {
    write_back = WriteBack::kAlways;
    return std::move(*this);
  }
  RunOption&& written_by_command() && {
    write_back = WriteBack::kByCommand;
    return std::move(*this);
  }
  RunOption&& given_flag(bool RunRequest::*flag) && {
    given = flag;
    return std::move(*this);
  }
  RunOption&& excluding(std::string other) && {
    excludes = std::move(other);
    return std::move(*this);
  }
};

inline RunOption option(std::string flag, std::string help) {
  RunOption o;
  o.flag = std::move(flag);
  o.help = std::move(help);
  return o;
}

// "a, b, c": a list of choices as help text says it.
inline std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The flag's first spelling ("--gpus" of "--gpus,--world-size").
inline std::string primary_flag(const RunOption& o) { return o.flag.substr(0, o.flag.find(',')); }

// Whether the row is a positional argument (the KEY VALUE overrides).
inline bool is_positional(const RunOption& o) { return o.flag.rfind("-", 0) != 0; }

}  // namespace ddpbench::requests
