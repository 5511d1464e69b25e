// cli_run_flags_test.cpp — command_line() writes a RunRequest back as the flags that reproduce it:
// parsing its output gives every field back (this is how `scale` starts its points, so a field
// lost on the way would silently change what a point measures), and fields left unset stay unset.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <tuple>

#include "cli/run_flags.h"
#include "requests/flag_choices.h"

namespace ddpbench::cli {
namespace {

auto fields(const run::RunRequest& r) {
  return std::make_tuple(
      r.scenario, r.modes, r.steps, r.batch_size, r.seed, r.dtype, r.data_dir, r.out, r.threads,
      r.world_size, r.backend, r.master_addr, r.timeout, r.ddp_impl, r.bucket_cap_mb,
      r.first_bucket_mb, r.no_broadcast_buffers, r.find_unused_parameters, r.comm_hook,
      r.inject_fault, r.grad_check, r.comparison, r.warmup, r.check_only, r.perf_only, r.strong,
      r.sync_bn, r.quiet, r.export_batches, r.bisect, r.accumulation_steps, r.no_sync, r.config,
      r.overrides, r.checkpoint_every, r.checkpoint_prefix, r.resume, r.eval_size, r.drop_last,
      r.bucket_cap_given, r.static_graph, r.gradient_as_bucket_view, r.model);
}

run::RunRequest parse(const std::vector<std::string>& args) {
  CLI::App app;
  run::RunRequest parsed;
  add_run_flags(*app.add_subcommand("run"), parsed);
  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 wants argv[0] gone
  app.parse(reversed);
  return parsed;
}

TEST(RunFlags, CommandLineRoundTripsEveryField) {
  run::RunRequest r;
  r.scenario = "toy_cnn";
  r.modes = {"single", "dp", "ddp"};
  r.steps = 7;
  r.batch_size = 48;
  r.seed = 3;
  r.dtype = "float64";
  r.data_dir = "/tmp/some data";
  r.model = "/tmp/my model.pt";
  r.out = "/tmp/out dir";
  r.threads = 2;
  r.world_size = 3;
  r.backend = "mpi";
  r.master_addr = "10.0.0.1";
  r.timeout = 12.25;
  r.ddp_impl = "naive";
  r.bucket_cap_mb = 0.1;
  r.bucket_cap_given = true;
  r.static_graph = true;
  r.gradient_as_bucket_view = true;
  r.first_bucket_mb = 1.0 / 3;
  r.no_broadcast_buffers = true;
  r.find_unused_parameters = true;
  r.comm_hook = "fp16";
  r.inject_fault = "grad:rank=1,step=2,eps=1e-3";
  r.grad_check = "full";
  r.comparison = run::ComparisonChoice::kLockstep;
  r.warmup = 0;
  r.check_only = true;
  r.strong = true;
  r.sync_bn = true;
  r.quiet = true;
  r.export_batches = true;
  r.bisect = true;
  r.accumulation_steps = 4;
  r.no_sync = false;
  r.overrides = {"TRAIN.SHUFFLE", "false"};
  r.checkpoint_every = 4;
  r.checkpoint_prefix = "module.";
  r.resume = "/tmp/a dir/checkpoint_ddp_step4.pt";
  r.eval_size = 101;
  r.drop_last = true;
  EXPECT_EQ(fields(parse(command_line(r))), fields(r));

  run::RunRequest other;
  other.perf_only = true;
  EXPECT_EQ(fields(parse(command_line(other))), fields(other));
}

TEST(RunFlags, UnsetFieldsAreNotWritten) {
  const std::vector<std::string> args = command_line(run::RunRequest{});
  for (const char* flag :
       {"--steps", "--batch-size", "--seed", "--dtype", "--data-dir", "--threads", "--modes",
        "--inject-fault", "--check-only", "--backend", "--accumulation-steps", "--checkpoint-every",
        "--checkpoint-prefix", "--resume", "--eval-size", "--drop-last"}) {
    EXPECT_EQ(std::find(args.begin(), args.end(), flag), args.end()) << flag;
  }
  EXPECT_EQ(args[0], "ddpbench");
  EXPECT_EQ(args[1], "run");
}

// --config and the KEY VALUE overrides reach the child as they were given (a spawned point that
// lost them would train the built-in), even an override whose value starts with '-'.
TEST(RunFlags, ScenarioFileAndOverridesRoundTrip) {
  run::RunRequest r;
  r.config = "/tmp/my scenario.yaml";
  r.overrides = {"TRAIN.SEED", "-1", "OPTIM.BASE_LR", "0.5"};
  r.modes = {"single", "ddp"};
  const std::vector<std::string> args = command_line(r);
  EXPECT_EQ(std::find(args.begin(), args.end(), "--scenario"), args.end())
      << "--config names its base; --scenario beside it is refused";
  const run::RunRequest back = parse(args);
  EXPECT_EQ(back.config, r.config);
  EXPECT_EQ(back.overrides, r.overrides);
  EXPECT_EQ(back.modes, r.modes);
  EXPECT_TRUE(command_line(run::RunRequest{}).back() != "--") << "no overrides, no separator";
}

// The overrides follow the flags: a list flag takes one word, so they are not read as modes.
TEST(RunFlags, OverridesAfterListFlagsStayOverrides) {
  const run::RunRequest r =
      parse({"ddpbench", "run", "--modes", "single,ddp", "TRAIN.STEPS", "2", "--steps", "3"});
  EXPECT_EQ(r.modes, (std::vector<std::string>{"single", "ddp"}));
  EXPECT_EQ(r.overrides, (std::vector<std::string>{"TRAIN.STEPS", "2"}));
  EXPECT_EQ(r.steps, 3);
  EXPECT_THROW(parse({"ddpbench", "run", "--config", "f.yaml", "--scenario", "toy_cnn"}),
               CLI::ExcludesError);
}

// --backend's choices and help come from comm/'s backend table (through requests/flag_choices.h): every
// backend is accepted, one the table lacks is refused, and the help names them all.
TEST(RunFlags, BackendChoicesComeFromTheBackendTable) {
  const std::vector<std::string> backends = run::backend_choices();
  ASSERT_FALSE(backends.empty());
  for (const std::string& b : backends) {
    EXPECT_EQ(parse({"ddpbench", "run", "--backend", b}).backend, b);
    EXPECT_NE(run::backend_help().find(b + " ("), std::string::npos) << run::backend_help();
  }
  EXPECT_THROW(parse({"ddpbench", "run", "--backend", "ucc"}), CLI::ValidationError);
  EXPECT_EQ(parse({"ddpbench", "run"}).backend, "") << "no --backend: the table's default";
}

}  // namespace
}  // namespace ddpbench::cli
