// app.cpp — see app.h. Every subcommand's flags live in that subcommand's file (the training
// flags in run_flags.cpp); this file only wires them together, hands each parsed request to its
// engine in run/, and owns the error-to-exit-code policy.
#include "cli/app.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "cli/ab_command.h"
#include "cli/comm_command.h"
#include "cli/diff_command.h"
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
#include "commands/execute_ab.h"
#include "commands/execute_comm.h"
#include "commands/execute_diff.h"
#include "commands/execute_gate.h"
#include "commands/execute_history.h"
#include "commands/execute_project.h"
#include "commands/execute_scale.h"
#include "commands/rerender_reports.h"
#include "errors.h"
#include "quoted_input.h"
#include "requests/run_options.h"
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

// Every command's request, as its flags fill it.
struct Requests {
  requests::RunRequest run;
  requests::ScaleRequest scale;
  requests::ReportRequest report;
  requests::GateRequest gate;
  requests::AbRequest ab;
  requests::CommRequest comm;
  requests::ProjectRequest project;
  requests::DiffRequest diff;
  requests::HistoryRequest history;
  SamplerCommandOptions sampler;
  ListCommandOptions list;
};

// Every command of the app.
struct Commands {
  CLI::App* run;
  CLI::App* sampler;
  CLI::App* list;
  CLI::App* report;
  CLI::App* gate;
  CLI::App* ab;
  CLI::App* scale;
  CLI::App* comm;
  CLI::App* project;
  CLI::App* diff;
  CLI::App* history;
};

Commands add_commands(CLI::App& app, Requests& r) {
  return {add_run_command(app, r.run),         add_sampler_command(app, r.sampler),
          add_list_command(app, r.list),       add_report_command(app, r.report),
          add_gate_command(app, r.gate),       add_ab_command(app, r.ab),
          add_scale_command(app, r.scale),     add_comm_command(app, r.comm),
          add_project_command(app, r.project), add_diff_command(app, r.diff),
          add_history_command(app, r.history)};
}

// Runs the parsed command; its errors are thrown to run_app, which maps them to exit codes.
int dispatch(const Commands& c, const Requests& r, const std::vector<std::string>& args, int argc,
             char** argv) {
  const run::LaunchingParent launching =
      run::prepare_launcher(c.run->parsed() || c.comm->parsed(), &run_app, argc, argv);
  const scenarios::ScenarioRegistry registry = scenarios::builtin_registry();
  if (c.run->parsed())
    return run::execute_run(r.run, registry, args, requests::command_line, launching.zygote());
  if (c.sampler->parsed()) return run_sampler_command(r.sampler);
  if (c.list->parsed()) return run_list_command(r.list, registry);
  if (c.report->parsed()) return commands::rerender_reports(r.report);
  if (c.gate->parsed()) return commands::execute_gate(r.gate);
  if (c.ab->parsed()) return commands::execute_ab(r.ab);
  if (c.scale->parsed())
    return commands::execute_scale(r.scale, registry, args, requests::command_line);
  if (c.comm->parsed()) return commands::execute_comm(r.comm, args, launching.zygote());
  if (c.project->parsed()) return commands::execute_project(r.project);
  if (c.diff->parsed()) return commands::execute_diff(r.diff);
  if (c.history->parsed()) return commands::execute_history(r.history);
  return kExitBadInput;
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
  Requests requests;
  const Commands commands = add_commands(app, requests);
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
  requests.comm.world_size_given = commands.comm->get_option("--gpus")->count() > 0;

  try {
    return dispatch(commands, requests, args, argc, argv);
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
}

}  // namespace ddpbench::cli
