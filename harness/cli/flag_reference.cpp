// flag_reference.cpp — see flag_reference.h. One list item per row: the flag and what it takes,
// its help, its default, the scenario key it sets, where report.json records it and whether
// `gate` compares it (from the report field's own declaration, reports/run/record_fields.h).
#include "cli/flag_reference.h"

#include <fmt/format.h>

#include "reports/run/record_lookup.h"
#include "requests/run_options.h"

namespace ddpbench::cli {
namespace {

// What the flag takes, as --help's value names say it ("" for a flag without a value).
template <typename T>
std::string takes(const requests::RunOption& row) {
  using Kind = requests::OptionCheck::Kind;
  const requests::OptionCheck& c = row.check;
  switch (c.kind) {
    case Kind::kOnOff:
      return "on|off";
    case Kind::kChoices: {
      std::string names;
      for (const std::string& n : c.choices)
        names += (names.empty() ? "" : "|") + (n.empty() ? "''" : n);
      return names;
    }
    case Kind::kIntegers:
      return c.hi == requests::kNoUpperBound ? fmt::format("INT>={}", c.lo)
                                             : fmt::format("INT in [{}, {}]", c.lo, c.hi);
    case Kind::kIntegerOneOf: {
      std::string values;
      for (long long v : c.one_of) values += fmt::format("{}{}", values.empty() ? "" : "|", v);
      return values;
    }
    case Kind::kPath:
      return "FILE";
    case Kind::kAny:
      break;
  }
  if (!c.type_name.empty()) return c.type_name;
  if constexpr (std::is_same_v<T, bool>) return "";
  if constexpr (std::is_same_v<T, double>) return "NUMBER";
  if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    return requests::is_positional(row) ? "KEY VALUE ..." : "A,B,...";
  }
  return "TEXT";
}

// Where report.json records the option, and what `gate` does with it.
std::string recorded(const requests::RunOption& row) {
  if (row.report == requests::kReportArgv) {
    return "Recorded in `context.argv` only; `gate` does not compare it.";
  }
  const std::string where =
      row.report.rfind("context.", 0) == 0 ? row.report : "config." + row.report;
  const std::optional<reports::Affects> affects = reports::config_field_affects(row.report);
  if (!affects) return fmt::format("Recorded as `{}`, which report.json lacks (a bug).", where);
  switch (*affects) {
    case reports::Affects::kNumbers:
      return fmt::format("Recorded as `{}`; `gate` refuses to compare runs that differ in it.",
                         where);
    case reports::Affects::kTimings:
      return fmt::format(
          "Recorded as `{}`; `gate` refuses runs that differ in it where both timed.", where);
    case reports::Affects::kReport:
      break;
  }
  return fmt::format("Recorded as `{}`; `gate` does not compare it.", where);
}

// Help text as the continuation of a list item (its lines indented under the item; a '<' of
// "checkpoint_<mode>_step<N>.pt" escaped, or Markdown reads it as an HTML tag).
std::string indented(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '\n') {
      out += "\n  ";
    } else if (ch == '<') {
      out += "\\<";
    } else {
      out += ch;
    }
  }
  return out;
}

struct ReferenceWriter {
  std::string& out;

  template <typename T>
  void operator()(requests::RunOption&& row, const T& field) {
    const std::string value = takes<T>(row);
    out += fmt::format("- **`{}`**{}: {}\n", row.flag,
                       value.empty() ? "" : fmt::format(" `{}`", value), indented(row.help));
    std::string facts;
    if (row.shown_default && !row.shown_default->empty()) {
      facts += fmt::format("Default: {}. ", *row.shown_default);
    } else if (!row.shown_default) {
      const std::string d = requests::option_text(row, field);
      if (!d.empty()) facts += fmt::format("Default: `{}`. ", d);
    }
    if (!row.scenario_key.empty())
      facts += fmt::format("Sets scenario key `{}`. ", row.scenario_key);
    facts += recorded(row);
    facts += row.scale ? " `run` and `scale`." : " `run` only.";
    out += "  " + facts + "\n";
  }
};

}  // namespace

std::string flag_reference() {
  std::string out =
      "# Flag reference: `ddpbench run` and `ddpbench scale`\n\n"
      "Written by `ddpbench list --flags` from the run options table "
      "(harness/requests/run_options.h), one row per option; a test holds this page to the "
      "binary. Each entry says what the flag takes, its default, the scenario key it sets, where "
      "report.json records it and whether `ddpbench gate` compares it. The other commands' flags: "
      "[commands.md](commands.md).\n\n";
  const requests::RunRequest fresh;
  ReferenceWriter writer{out};
  requests::run_options(writer, fresh);
  return out;
}

}  // namespace ddpbench::cli
