// cli_run_flags_test.cpp — command_line() writes a RunRequest back as the flags that reproduce it,
// and the CLI's flags parse it: parsing its output gives every row's field back (this is how
// `scale` starts its points, so a field lost on the way would silently change what a point
// measures), and fields left unset stay unset. Every row of the run options table is walked, so a
// new option is covered without an edit here.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <algorithm>

#include "cli/run_flags.h"
#include "requests/flag_choices.h"
#include "requests/run_options.h"

namespace ddpbench::cli {
namespace {

requests::RunRequest parse(const std::vector<std::string>& args) {
  CLI::App app;
  requests::RunRequest parsed;
  add_run_flags(*app.add_subcommand("run"), parsed);
  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 wants argv[0] gone
  app.parse(reversed);
  return parsed;
}

// Sets every row's field to a value other than a fresh request's, within the row's check (the
// scenario file aside: --config excludes --scenario, and is set in a request of its own).
struct SetEveryRow {
  requests::RunRequest& r;

  template <typename T>
  void operator()(requests::RunOption&& row, T& field) {
    using Kind = requests::OptionCheck::Kind;
    if (row.flag == "--config") return;
    if (row.given) r.*row.given = true;
    if constexpr (std::is_same_v<T, bool>) {
      field = !field;
    } else if constexpr (std::is_same_v<T, int64_t>) {
      if (row.check.kind == Kind::kIntegerOneOf) {
        field = row.check.one_of.back();
      } else {
        field = std::max<int64_t>(row.check.lo, field) + 3;
      }
    } else if constexpr (std::is_same_v<T, double>) {
      field = field / 3 + 0.25;  // a double that needs its shortest round-trip form
    } else if constexpr (std::is_same_v<T, std::string>) {
      field =
          row.check.kind == Kind::kChoices ? row.check.choices.back() : "/tmp/a dir/x " + row.flag;
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      field = requests::is_positional(row) ? std::vector<std::string>{"TRAIN.SEED", "-1"}
                                           : std::vector<std::string>{"single", "ddp"};
    } else if constexpr (std::is_same_v<T, requests::DeviceChoice>) {
      field = requests::DeviceChoice::kCpu;
    } else {
      field = requests::ComparisonChoice::kFree;
    }
  }
};

// Every row's field as text, and the `given` flags: two requests that read alike to every row.
struct RowTexts {
  std::vector<std::string>& out;

  template <typename T>
  void operator()(requests::RunOption&& row, const T& field) {
    std::string text = row.flag + "=";
    if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      for (const std::string& e : field) text += e + "|";
    } else if constexpr (std::is_enum_v<T>) {
      text += std::to_string(static_cast<int>(field));
    } else if constexpr (std::is_same_v<T, std::string>) {
      text += field;
    } else {
      text += fmt::format("{}", field);
    }
    out.push_back(text);
  }
};

std::vector<std::string> row_texts(const requests::RunRequest& r) {
  std::vector<std::string> out;
  RowTexts texts{out};
  requests::run_options(texts, r);
  out.push_back(
      fmt::format("gpus given {}, bucket cap given {}", r.world_size_given, r.bucket_cap_given));
  return out;
}

TEST(RunFlags, CommandLineRoundTripsEveryRow) {
  requests::RunRequest r;
  SetEveryRow set{r};
  requests::run_options(set, r);
  r.check_only = false;  // --check-only and --perf-only are refused together later, not here
  const std::vector<std::string> before = row_texts(r);
  EXPECT_EQ(row_texts(parse(requests::command_line(r))), before);
  EXPECT_NE(before, row_texts(requests::RunRequest{})) << "every row was set";

  requests::RunRequest other;
  other.perf_only = true;
  other.world_size_given = true;  // --gpus is written always: a child runs the parent's K, given
  EXPECT_EQ(row_texts(parse(requests::command_line(other))), row_texts(other));
}

// The flags of the rows written always.
struct AlwaysWritten {
  std::vector<std::string>& out;
  template <typename T>
  void operator()(requests::RunOption&& row, const T&) {
    if (row.write_back == requests::WriteBack::kAlways) out.push_back(requests::primary_flag(row));
  }
};

// A fresh request is written as the rows written always and nothing else.
TEST(RunFlags, UnsetFieldsAreNotWritten) {
  std::vector<std::string> always;
  AlwaysWritten collect{always};
  const requests::RunRequest fresh;
  requests::run_options(collect, fresh);
  const std::vector<std::string> args = requests::command_line(requests::RunRequest{});
  ASSERT_GE(args.size(), 4u);
  EXPECT_EQ(args[0], "ddpbench");
  EXPECT_EQ(args[1], "run");
  EXPECT_EQ(args[2], "--scenario");
  for (size_t i = 4; i < args.size(); ++i) {
    if (args[i].rfind("--", 0) != 0) continue;  // a value
    EXPECT_NE(std::find(always.begin(), always.end(), args[i]), always.end()) << args[i];
  }
  for (const char* flag : {"--steps", "--batch-size", "--seed", "--modes", "--inject-fault",
                           "--check-only", "--backend", "--resume", "--eval-size", "--drop-last"}) {
    EXPECT_EQ(std::find(args.begin(), args.end(), flag), args.end()) << flag;
  }
}

// --config and the KEY VALUE overrides reach the child as they were given (a spawned point that
// lost them would train the built-in), even an override whose value starts with '-'.
TEST(RunFlags, ScenarioFileAndOverridesRoundTrip) {
  requests::RunRequest r;
  r.config = "/tmp/my scenario.yaml";
  r.overrides = {"TRAIN.SEED", "-1", "OPTIM.BASE_LR", "0.5"};
  r.modes = {"single", "ddp"};
  const std::vector<std::string> args = requests::command_line(r);
  EXPECT_EQ(std::find(args.begin(), args.end(), "--scenario"), args.end())
      << "--config names its base; --scenario beside it is refused";
  const requests::RunRequest back = parse(args);
  EXPECT_EQ(back.config, r.config);
  EXPECT_EQ(back.overrides, r.overrides);
  EXPECT_EQ(back.modes, r.modes);
  EXPECT_TRUE(requests::command_line(requests::RunRequest{}).back() != "--")
      << "no overrides, no separator";
}

// The overrides follow the flags: a list flag takes one word, so they are not read as modes.
TEST(RunFlags, OverridesAfterListFlagsStayOverrides) {
  const requests::RunRequest r =
      parse({"ddpbench", "run", "--modes", "single,ddp", "TRAIN.STEPS", "2", "--steps", "3"});
  EXPECT_EQ(r.modes, (std::vector<std::string>{"single", "ddp"}));
  EXPECT_EQ(r.overrides, (std::vector<std::string>{"TRAIN.STEPS", "2"}));
  EXPECT_EQ(r.steps, 3);
  EXPECT_THROW(parse({"ddpbench", "run", "--config", "f.yaml", "--scenario", "toy_cnn"}),
               CLI::ExcludesError);
}

// --backend's choices and help come from comm/'s backend table (through requests/flag_choices.h):
// every backend is accepted, one the table lacks is refused, and the help names them all.
TEST(RunFlags, BackendChoicesComeFromTheBackendTable) {
  const std::vector<std::string> backends = requests::backend_choices();
  ASSERT_FALSE(backends.empty());
  for (const std::string& b : backends) {
    EXPECT_EQ(parse({"ddpbench", "run", "--backend", b}).backend, b);
    EXPECT_NE(requests::backend_help().find(b + " ("), std::string::npos)
        << requests::backend_help();
  }
  EXPECT_THROW(parse({"ddpbench", "run", "--backend", "ucc"}), CLI::ValidationError);
  EXPECT_EQ(parse({"ddpbench", "run"}).backend, "") << "no --backend: the table's default";
}

}  // namespace
}  // namespace ddpbench::cli
