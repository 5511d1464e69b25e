// run_flags.cpp — see run_flags.h. Each row of requests/run_options.h becomes one CLI11 option,
// bound to its RunRequest field by the field's type.
#include "cli/run_flags.h"

#include "cli/list_option.h"
#include "cli/validators.h"
#include "requests/run_options.h"

namespace ddpbench::cli {
namespace {

// A path flag given an empty value: an unset variable in a script (`--resume "$CKPT"`), not a
// request for the flag's default, which would train from scratch and pass.
CLI::Validator non_empty_path(const std::string& fix) {
  return CLI::Validator(
      [fix](std::string& value) -> std::string {
        return value.empty() ? "an empty path: " + fix : std::string();
      },
      "FILE");
}

// The row's check as a CLI11 validator (none for kAny and kOnOff, whose binding checks).
void apply_check(CLI::Option* o, const requests::OptionCheck& c) {
  using Kind = requests::OptionCheck::Kind;
  switch (c.kind) {
    case Kind::kAny:
    case Kind::kOnOff:
      if (!c.type_name.empty()) o->type_name(c.type_name);
      return;
    case Kind::kChoices:
      o->check(CLI::IsMember(c.choices));
      return;
    case Kind::kIntegers:
      o->check(integer_in(c.lo, c.hi));
      return;
    case Kind::kIntegerOneOf:
      o->check(integer_one_of(c.one_of, c.meaning));
      return;
    case Kind::kPath:
      o->check(non_empty_path(c.fix));
      return;
  }
}

// Adds the rows to a command, each bound to its field: those `scale` takes, and with
// include_run_only `run`'s own too.
struct FlagBinder {
  CLI::App& cmd;
  requests::RunRequest& request;
  bool include_run_only;

  template <typename T>
  void operator()(requests::RunOption&& row, T& field) {
    if (!row.scale && !include_run_only) return;
    CLI::Option* o = bind(row, field);
    apply_check(o, row.check);
    if (row.shown_default) o->default_str(*row.shown_default);
    if (row.given) {
      bool requests::RunRequest::*given = row.given;
      requests::RunRequest& r = request;
      o->each([&r, given](const std::string&) { r.*given = true; });
    }
    if (!row.excludes.empty()) o->excludes(cmd.get_option(row.excludes));
  }

 private:
  CLI::Option* bind(const requests::RunOption& row, bool& field) {
    if (row.check.kind != requests::OptionCheck::Kind::kOnOff) {
      return cmd.add_flag(row.flag, field, row.help);
    }
    return cmd
        .add_option_function<std::string>(
            row.flag, [&field](const std::string& v) { field = v == "on"; }, row.help)
        ->check(CLI::IsMember(field ? std::vector<std::string>{"on", "off"}
                                    : std::vector<std::string>{"off", "on"}))  // default first
        ->default_str(field ? "on" : "off");
  }
  CLI::Option* bind(const requests::RunOption& row, std::vector<std::string>& field) {
    if (requests::is_positional(row)) return cmd.add_option(row.flag, field, row.help);
    // The words after a list flag are KEY VALUE overrides, not more elements.
    return add_list_option(cmd, row.flag, field, row.help)->allow_extra_args(false);
  }
  CLI::Option* bind(const requests::RunOption& row, requests::DeviceChoice& field) {
    return cmd
        .add_option_function<std::string>(
            row.flag, [&field](const std::string& name) { field = requests::device_from(name); },
            row.help)
        ->default_str(requests::device_name(field));
  }
  CLI::Option* bind(const requests::RunOption& row, requests::ComparisonChoice& field) {
    return cmd
        .add_option_function<std::string>(
            row.flag,
            [&field](const std::string& name) { field = requests::comparison_from(name); },
            row.help)
        ->default_str(requests::comparison_name(field));
  }
  template <typename T>
  CLI::Option* bind(const requests::RunOption& row, T& field) {
    return cmd.add_option(row.flag, field, row.help);
  }
};

}  // namespace

void add_shared_run_flags(CLI::App& cmd, requests::RunRequest& r) {
  // --help shows each flag's default (the value RunRequest starts with).
  cmd.option_defaults()->always_capture_default();
  FlagBinder bind{cmd, r, /*include_run_only=*/false};
  requests::run_options(bind, r);
}

void add_run_flags(CLI::App& cmd, requests::RunRequest& r) {
  cmd.option_defaults()->always_capture_default();
  FlagBinder bind{cmd, r, /*include_run_only=*/true};
  requests::run_options(bind, r);
}

}  // namespace ddpbench::cli
