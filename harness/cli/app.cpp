// app.cpp — see app.h. Every subcommand's flags live in that subcommand's file (the training
// flags in run_flags.cpp); this file only wires them together, hands each parsed request to its
// engine in run/, and owns the error-to-exit-code policy.
#include "cli/app.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "cli/comm_command.h"
#include "cli/diff_command.h"
#include "cli/ab_command.h"
#include "cli/gate_command.h"
#include "cli/history_command.h"
#include "cli/list_command.h"
#include "cli/list_option.h"
#include "cli/project_command.h"
#include "cli/report_command.h"
#include "cli/run_command.h"
#include "cli/run_flags.h"
#include "cli/sampler_command.h"
#include "cli/scale_command.h"
#include "commands/execute_comm.h"
#include "commands/execute_diff.h"
#include "commands/execute_ab.h"
#include "commands/execute_gate.h"
#include "commands/execute_history.h"
#include "commands/execute_project.h"
#include "commands/execute_scale.h"
#include "commands/rerender_reports.h"
#include "errors.h"
#include "quoted_input.h"
#include "run/execute_run.h"
#include "run/process_role.h"
#include "run/version_line.h"
#include "scenarios/registry.h"

namespace ddpbench::cli {
namespace {

// CLI11 messages can span lines; the contract is one line per error, and nothing in it may
// drive the terminal or flood it (quoted_input.h).
std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return printable_message(s);
}

// c10 errors append a C++ backtrace to the message; users need the first sentence.
std::string brief(std::string s) {
  const size_t cut = s.find(" Exception raised from ");
  if (cut != std::string::npos) s.resize(cut);
  const size_t nl = s.find("\nException raised from ");
  if (nl != std::string::npos) s.resize(nl);
  return one_line(s);
}

// `ddpbench --scenario cifar_resnet18 --gpus 8`, the form users know from PyTorch's launchers,
// means `run`: flags without a subcommand go to run (--help and --version stay the app's).
std::vector<std::string> with_default_subcommand(std::vector<std::string> args) {
  if (args.size() < 2) return args;
  const std::string& first = args[1];
  const bool app_flag = first == "-h" || first == "--help" || first == "--version";
  if (first.rfind('-', 0) == 0 && !app_flag) args.insert(args.begin() + 1, "run");
  return args;
}

}  // namespace

int run_app(int argc, char** argv) {
  run::prepare_process(argc > 0 ? argv[0] : nullptr);
  const std::vector<std::string> args = with_default_subcommand({argv, argv + argc});
  CLI::App app{
      "ddpbench — correctness and scaling harness for data-parallel training (flags "
      "without a subcommand mean `run`)",
      "ddpbench"};
  app.set_version_flag("--version", run::version_line());
  app.require_subcommand(1);

  run::RunRequest run_request;
  run::ScaleRequest scale_request;
  run::ReportRequest report_request;
  run::GateRequest gate_request;
  run::AbRequest ab_request;
  run::CommRequest comm_request;
  run::ProjectRequest project_request;
  run::DiffRequest diff_request;
  run::HistoryRequest history_request;
  SamplerCommandOptions sampler_options;
  ListCommandOptions list_options;
  CLI::App* run_cmd = add_run_command(app, run_request);
  CLI::App* sampler_cmd = add_sampler_command(app, sampler_options);
  CLI::App* list_cmd = add_list_command(app, list_options);
  CLI::App* report_cmd = add_report_command(app, report_request);
  CLI::App* gate_cmd = add_gate_command(app, gate_request);
  CLI::App* ab_cmd = add_ab_command(app, ab_request);
  CLI::App* scale_cmd = add_scale_command(app, scale_request);
  CLI::App* comm_cmd = add_comm_command(app, comm_request);
  CLI::App* project_cmd = add_project_command(app, project_request);
  CLI::App* diff_cmd = add_diff_command(app, diff_request);
  CLI::App* history_cmd = add_history_command(app, history_request);
  // --checkpoint-prefix '' is its documented "none"; an override's value is the key's to judge.
  refuse_empty_values(app, {"--checkpoint-prefix", "overrides"});

  try {
    // CLI11 takes the arguments reversed, without the program name.
    std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);
    app.parse(reversed);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help / --version
  } catch (const CLI::ParseError& e) {
    std::string where = "ddpbench";
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    fmt::print(stderr, "ddpbench: error: {} (see `{} --help`)\n", one_line(e.what()), where);
    return kExitBadInput;
  }

  run_request.world_size_given = run_cmd->get_option("--gpus")->count() > 0;
  comm_request.world_size_given = comm_cmd->get_option("--gpus")->count() > 0;

  try {
    const run::LaunchingParent launching =
        run::prepare_launcher(run_cmd->parsed() || comm_cmd->parsed(), &run_app, argc, argv);
    const scenarios::ScenarioRegistry registry = scenarios::builtin_registry();
    if (run_cmd->parsed())
      return run::execute_run(run_request, registry, args, command_line, launching.zygote());
    if (sampler_cmd->parsed()) return run_sampler_command(sampler_options);
    if (list_cmd->parsed()) return run_list_command(list_options, registry);
    if (report_cmd->parsed()) return run::rerender_reports(report_request);
    if (gate_cmd->parsed()) return run::execute_gate(gate_request);
    if (ab_cmd->parsed()) return run::execute_ab(ab_request);
    if (scale_cmd->parsed()) return run::execute_scale(scale_request, registry, args, command_line);
    if (comm_cmd->parsed()) return run::execute_comm(comm_request, args, launching.zygote());
    if (project_cmd->parsed()) return run::execute_project(project_request);
    if (diff_cmd->parsed()) return run::execute_diff(diff_request);
    if (history_cmd->parsed()) return run::execute_history(history_request);
  } catch (const InputError& e) {
    fmt::print(stderr, "ddpbench: error: {}\n", one_line(e.what()));
    return kExitBadInput;
  } catch (const WorkerFailure& e) {
    fmt::print(stderr, "ddpbench: worker failure: {}\n", one_line(e.what()));
    return kExitWorkerFailed;
  } catch (const std::exception& e) {
    // Inside a spawned worker this is almost always a collective failing because a peer died:
    // a distinct code lets the parent blame the peer that failed first.
    fmt::print(stderr, "ddpbench: failure: {}\n", brief(e.what()));
    return run::is_spawned_worker() ? kExitPeerLost : kExitWorkerFailed;
  }
  return kExitBadInput;
}

}  // namespace ddpbench::cli
