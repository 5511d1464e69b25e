// comm_command.cpp — see comm_command.h. Sizes, dtype, collectives and the fault are checked by
// the engine (comm_sweep/comm_plan.h), which names the flag and the fix in its one error line.
#include "cli/comm_command.h"

#include "cli/list_option.h"
#include "cli/validators.h"
#include "requests/flag_choices.h"

namespace ddpbench::cli {

CLI::App* add_comm_command(CLI::App& app, requests::CommRequest& r) {
  CLI::App* cmd = app.add_subcommand(
      "comm", "Collective bandwidth, nccl-tests style: time, algbw, busbw and #wrong per size");
  add_list_option(*cmd, "--collectives", r.collectives,
                  "Collectives to measure, e.g. allreduce,allgather (default: allreduce, "
                  "broadcast, allgather, reduce_scatter)");
  cmd->add_option("--min-bytes", r.min_bytes,
                  "Smallest size in bytes (K, M, G = 1024^1..3; allgather: output, "
                  "reduce_scatter: input)")
      ->capture_default_str();
  cmd->add_option("--max-bytes", r.max_bytes, "Largest size in bytes, e.g. 44.7M")
      ->capture_default_str();
  cmd->add_option("--step-factor", r.step_factor, "Each size is the previous times this")
      ->check(integer_at_least(2))
      ->capture_default_str();
  cmd->add_option("--iters", r.iters, "Timed calls per size")
      ->check(integer_at_least(1))
      ->capture_default_str();
  cmd->add_option("--warmup", r.warmup, "Untimed calls per size before the timed ones")
      ->check(integer_at_least(0))
      ->capture_default_str();
  cmd->add_option("--dtype", r.dtype, "float32 or float64")
      ->check(CLI::IsMember({"float32", "float64"}))
      ->capture_default_str();
  cmd->add_option("--backend", r.backend, requests::backend_help())
      ->check(CLI::IsMember(requests::backend_choices()));
  cmd->add_option_function<std::string>(
         "--device", [&r](const std::string& name) { r.device = requests::device_from(name); },
         "auto, cpu or cuda")
      ->check(CLI::IsMember(requests::device_choices()))
      ->default_str(requests::device_name(requests::DeviceChoice::kAuto));
  cmd->add_option("--gpus", r.world_size, "Ranks (spawned by ddpbench unless a launcher runs it)")
      ->check(integer_in(1, 64))
      ->capture_default_str();
  cmd->add_flag("--oversubscribe", r.oversubscribe,
                "Allow more ranks than 4 per core (at least 8), as `run` does");
  cmd->add_option("--out", r.out, "Output directory for comm.json and comm.csv")
      ->capture_default_str();
  cmd->add_option("--timeout", r.timeout, "Seconds without progress before a rank is declared hung")
      ->capture_default_str();
  cmd->add_option("--inject-fault", r.inject_fault,
                  "corrupt:rank=R[,collective=C]: rank R changes one element of C's result in "
                  "the check pass, to prove #wrong and FAILED work");
  return cmd;
}

}  // namespace ddpbench::cli
