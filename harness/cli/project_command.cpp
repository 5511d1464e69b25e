// project_command.cpp — see project_command.h.
#include "cli/project_command.h"

#include "cli/list_option.h"
#include "cli/validators.h"
#include "requests/flag_choices.h"

namespace ddpbench::cli {

CLI::App* add_project_command(CLI::App& app, requests::ProjectRequest& r) {
  CLI::App* cmd = app.add_subcommand(
      "project", "Project a measured run's DDP scaling to more devices and other links (a model)");
  cmd->add_option("--from", r.from, "report.json (or its folder) of `ddpbench run` or `scale`")
      ->required();
  add_list_option(*cmd, "--devices", r.devices, "Device counts to project to",
                  integer_in(1, 1 << 20))
      ->capture_default_str();
  add_list_option(*cmd, "--link-gbps", r.link_gbit_s, "Link bandwidths in Gbit/s",
                  number_in(1e-3, 1e6, "link bandwidth in Gbit/s, e.g. 100"))
      ->capture_default_str();
  cmd->add_option("--algo", r.algo, "Allreduce algorithm: ring or tree (NCCL's double binary tree)")
      ->check(CLI::IsMember(requests::projection_algo_choices()))
      ->capture_default_str();
  cmd->add_option("--alpha-us", r.alpha_us, "Per-message latency of the projected links, in us")
      ->check(number_in(0, 1e6, "latency in microseconds, e.g. 5"))
      ->capture_default_str();
  cmd->add_option("--out", r.out, "Output directory for projection.{json,csv,html}")
      ->capture_default_str();
  return cmd;
}

}  // namespace ddpbench::cli
