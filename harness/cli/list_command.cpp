// list_command.cpp — see list_command.h. Builds each model once to count its parameters (cheap,
// and never stale, unlike a hard-coded number).
#include "cli/list_command.h"

#include <fmt/format.h>
#include <torch/nn/module.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/flag_reference.h"
#include "errors.h"
#include "scenarios/scenario_config.h"

namespace ddpbench::cli {
namespace {

int64_t count_parameters(const scenarios::ScenarioSpec& spec) {
  int64_t n = 0;
  for (const auto& p : spec.build_model(spec.seed).ptr()->parameters()) n += p.numel();
  return n;
}

}  // namespace

CLI::App* add_list_command(CLI::App& app, ListCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("list", "List the registered scenarios");
  CLI::Option* format = cmd->add_option("--format", o.format, "Output format")
                            ->check(CLI::IsMember({"text", "json"}));
  CLI::Option* yaml =
      cmd->add_option("--yaml", o.yaml,
                      "Print this scenario as a scenario file (YAML) for `ddpbench run --config`");
  cmd->add_flag("--keys", o.keys, "Print every key a scenario file may set, with its type")
      ->excludes(yaml)
      ->excludes(format);
  cmd->add_flag("--flags", o.flags,
                "Print the flag reference of `run` and `scale` (Markdown, as docs/flags.md)")
      ->excludes(yaml)
      ->excludes(format)
      ->excludes("--keys");
  yaml->excludes(format);
  return cmd;
}

int run_list_command(const ListCommandOptions& o, const scenarios::ScenarioRegistry& registry) {
  if (o.flags) {
    std::cout << flag_reference();
    return kExitOk;
  }
  if (o.keys) {
    std::cout << scenarios::scenario_keys_text();
    return kExitOk;
  }
  if (!o.yaml.empty()) {
    std::cout << scenarios::scenario_yaml(registry.get(o.yaml));
    return kExitOk;
  }
  nlohmann::json rows = nlohmann::json::array();
  std::string text = fmt::format("{:<18} {:<26} {:>10} {:>6} {:>6}  {}\n", "scenario", "model",
                                 "params", "batch", "steps", "dataset");
  for (const auto& s : registry.all()) {
    const int64_t params = count_parameters(s);
    const bool is_default = s.name == scenarios::kDefaultScenario;
    rows.push_back({{"name", s.name},
                    {"model", s.model_name},
                    {"parameters", params},
                    {"dataset", s.dataset_name},
                    {"global_batch", s.global_batch},
                    {"steps", s.steps},
                    {"default", is_default},
                    {"summary", s.summary}});
    text += fmt::format("{:<18} {:<26} {:>10} {:>6} {:>6}  {}{}\n", s.name, s.model_name, params,
                        s.global_batch, s.steps, s.dataset_name, is_default ? "  (default)" : "");
  }
  std::cout << (o.format == "json" ? rows.dump(2) + "\n" : text);
  return kExitOk;
}

}  // namespace ddpbench::cli
