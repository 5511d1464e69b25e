// run_flags.cpp — see run_flags.h.
#include "cli/run_flags.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/list_option.h"
#include "cli/validators.h"
#include "input_bounds.h"
#include "requests/flag_choices.h"

namespace ddpbench::cli {

namespace {

// --config FILE and the KEY VALUE overrides after the flags (scenarios/scenario_config.h). A file
// names its own base, so --scenario beside it would be a second answer to the same question.
void add_scenario_config_flags(CLI::App& cmd, run::RunRequest& r, CLI::Option* scenario) {
  cmd.add_option("--config", r.config,
                 "Scenario file (YAML) naming its built-in base; `ddpbench list --yaml NAME` "
                 "prints one")
      ->excludes(scenario);
  cmd.add_option("overrides", r.overrides,
                 "KEY VALUE pairs over the scenario's keys, e.g. TRAIN.BATCH_SIZE 128 "
                 "OPTIM.BASE_LR 0.1 (`ddpbench list --keys`); flags such as --batch-size win");
}

// A path flag given an empty value: an unset variable in a script (`--resume "$CKPT"`), not a
// request for the flag's default, which would train from scratch and pass.
CLI::Validator non_empty_path(const std::string& fix) {
  return CLI::Validator(
      [fix](std::string& value) -> std::string {
        return value.empty() ? "an empty path: " + fix : std::string();
      },
      "FILE");
}

// Synthetic data for a model that comes without any, and the loss. Each sets a scenario key,
// whose parser checks the text (scenarios/scenario_keys.cpp), so a flag and a file cannot
// disagree on what a value means.
void add_synthetic_data_flags(CLI::App& cmd, run::RunRequest& r) {
  cmd.add_option("--input-shape", r.input_shape,
                 "Train on synthetic data: one sample's input shape, e.g. 3,32,32 (with "
                 "--num-classes or --target-shape)");
  cmd.add_option("--input-dtype", r.input_dtype,
                 "Synthetic inputs: float32 (normal, in the run's dtype) or int64 token ids "
                 "below --vocab-size")
      ->check(CLI::IsMember({"float32", "int64"}));
  cmd.add_option("--vocab-size", r.vocab_size, "Synthetic int64 inputs: ids are drawn below it")
      ->type_name("INT");
  cmd.add_option("--num-classes", r.num_classes,
                 "Synthetic class-label targets in [0, N) (loss cross_entropy by default)")
      ->type_name("INT");
  cmd.add_option("--target-shape", r.target_shape,
                 "Synthetic regression targets of this shape per sample, e.g. 10 (loss mse by "
                 "default)");
  cmd.add_option("--loss", r.loss,
                 fmt::format("Loss: {} (default: the scenario's, or the synthetic targets')",
                             fmt::join(run::loss_choices(), ", ")))
      ->check(CLI::IsMember(run::loss_choices()));
}

// What trains: the scenario or model, its data, steps, batch, seed, dtype and mixed precision.
void add_workload_flags(CLI::App& cmd, run::RunRequest& r) {
  CLI::Option* scenario =
      cmd.add_option("--scenario", r.scenario, "Scenario name (see `ddpbench list`)");
  add_scenario_config_flags(cmd, r, scenario);
  cmd.add_option("--model", r.model,
                 "TorchScript file (torch.jit.script(model).save) trained instead of the "
                 "scenario's model; the scenario still gives the optimizer, and the data and loss "
                 "unless --data or --input-shape replace them")
      ->check(non_empty_path("pass the .pt file torch.jit.script(model).save wrote"));
  cmd.add_option("--data", r.data_file,
                 "torch.save file of {\"inputs\": Tensor[N,...], \"targets\": Tensor[N]} "
                 "trained on instead of the scenario's data (no evaluation split)")
      ->check(non_empty_path(
          "pass the .pt file torch.save({\"inputs\": x, \"targets\": y}, FILE) wrote"));
  add_synthetic_data_flags(cmd, r);
  cmd.add_option("--steps", r.steps,
                 "Training steps: checked steps, and timed steps after --warmup (default: the "
                 "scenario's)")
      ->check(integer_in(1, kMaxSteps))
      ->default_str("");  // 0 stands for "the scenario's", which the text says
  cmd.add_option("--batch-size", r.batch_size,
                 "Global batch size, all ranks together (default: the scenario's; `scale`: at "
                 "the largest world size)")
      ->check(integer_in(1, kMaxBatch))
      ->default_str("");
  cmd.add_option("--seed", r.seed,
                 "Seed for init, shuffle and augmentation (default: the scenario's)")
      ->check(integer_at_least(0))
      ->default_str("");
  cmd.add_flag("--drop-last", r.drop_last,
               "DistributedSampler(drop_last=True): drop the tail of each epoch instead of padding "
               "it with duplicates");
  cmd.add_option("--dtype", r.dtype, "float32 or float64 (default: the scenario's)")
      ->check(CLI::IsMember({"float32", "float64"}));
  cmd.add_option("--amp", r.amp,
                 "Automatic mixed precision in every mode: forward and loss under autocast to "
                 "bf16, or fp16 with a GradScaler; parameters stay float32 (default: the "
                 "scenario's, off)")
      ->check(CLI::IsMember(run::amp_choices()));
  cmd.add_option("--grad-scaler-init", r.grad_scaler_init,
                 "--amp fp16: the GradScaler's initial scale (default 65536)")
      ->type_name("NUMBER");
  cmd.add_option("--growth-interval", r.growth_interval,
                 "--amp fp16: clean steps before the GradScaler doubles its scale (default 2000)")
      ->type_name("INT");
  cmd.add_option("--data-dir", r.data_dir, "Dataset directory (default: the scenario's data)");
}

// Where and how the processes run: output, threads, device, collectives, rendezvous, timeout.
void add_machine_flags(CLI::App& cmd, run::RunRequest& r) {
  cmd.add_option("--out", r.out, "Output directory for the report files");
  cmd.add_option("--threads", r.threads, "Intra-op threads per process (default: cores / ranks)")
      ->check(integer_at_least(1))
      ->default_str("");
  cmd.add_option_function<std::string>(
         "--device", [&r](const std::string& name) { r.device = run::device_from(name); },
         "auto (CUDA when this build and machine have it), cpu, cuda")
      ->check(CLI::IsMember(run::device_choices()))
      ->default_str(run::device_name(run::DeviceChoice::kAuto));
  cmd.add_flag("--oversubscribe", r.oversubscribe,
               "Allow more ranks than 4 per core (at least 8) and more --threads than cores");
  cmd.add_flag("--no-pin-cores", r.no_pin_cores,
               "Leave spawned ranks unpinned (by default each runs on cores of its own when they "
               "fit: docs/gate.md)");
  cmd.add_flag("--debug-collectives", r.debug_collectives,
               "Before every collective the ranks compare what they are about to issue (op, "
               "sequence number, step, dtype, count) and stop at once, exit 3, when they differ, "
               "instead of hanging or reducing mismatched buffers (ddp, zero; costs a small "
               "allgather per collective)");
  cmd.add_flag("--share-gpus", r.share_gpus,
               "Allow several ranks or replicas per CUDA device (DDP over gloo or mpi)");
  cmd.add_option_function<std::string>(
         "--tf32", [&r](const std::string& v) { r.tf32 = v == "on"; },
         "TensorFloat-32 on CUDA: off (default) or on")
      ->check(CLI::IsMember({"off", "on"}))
      ->default_str("off");
  cmd.add_option("--backend", r.backend, run::backend_help())
      ->check(CLI::IsMember(run::backend_choices()));
  cmd.add_option("--master-addr", r.master_addr, "Address the workers rendezvous on");
  cmd.add_option("--timeout", r.timeout, "Seconds without progress before a rank is declared hung");
}

// How the data-parallel modes train: the DDP engine and its options, zero's stage, accumulation,
// the perf phase, SyncBN.
void add_engine_flags(CLI::App& cmd, run::RunRequest& r) {
  cmd.add_option("--ddp-impl", r.ddp_impl,
                 "DDP engine: bucketed (ddpbench's, overlapping), naive, or c10d (PyTorch's own "
                 "Reducer, as torch.nn.parallel.DistributedDataParallel drives it)")
      ->check(CLI::IsMember(run::ddp_impl_choices()));
  cmd.add_option("--bucket-cap-mb", r.bucket_cap_mb,
                 "DDP bucket cap in MiB (zero stages 1 and 2 bucket their gradients as DDP does)")
      ->each([&r](const std::string&) { r.bucket_cap_given = true; });
  cmd.add_flag("--static-graph", r.static_graph,
               "DDP static_graph=True (--ddp-impl c10d): the first iteration's reduction is "
               "delayed to the end of backward and the graph is assumed fixed after it");
  cmd.add_flag("--gradient-as-bucket-view", r.gradient_as_bucket_view,
               "DDP gradient_as_bucket_view=True (--ddp-impl c10d; ddpbench's bucketed engine "
               "always works this way)");
  cmd.add_option("--first-bucket-mb", r.first_bucket_mb, "DDP first bucket size in MiB");
  cmd.add_flag("--no-broadcast-buffers", r.no_broadcast_buffers,
               "Do not broadcast rank 0's buffers before each forward");
  cmd.add_flag("--find-unused-parameters", r.find_unused_parameters,
               "Reduce parameters without a gradient as zeros");
  cmd.add_option(
         "--zero-stage", r.zero_stage,
         "The zero mode's ZeRO stage: 1 (optimizer state sharded, as PyTorch's "
         "ZeroRedundancyOptimizer), 2 (gradients reduce-scattered to their owners too) or 3 "
         "(parameters sharded on dim 0 too, gathered for forward and backward, as FSDP)")
      ->check(integer_one_of({1, 2, 3}, "the ZeRO stage"))
      ->default_str("1");
  cmd.add_option(
         "--shard-group", r.shard_group,
         "Hybrid sharding (HSDP) in the zero mode at stage 2 or 3: shard over groups of S ranks "
         "and replicate across the K/S groups, as FSDP2's fully_shard over a (K/S, S) mesh "
         "(default: the whole world)")
      ->check(integer_in(1, 1 << 20))
      ->default_str("");
  cmd.add_option(
         "--accumulation-steps", r.accumulation_steps,
         "Gradient accumulation: micro-steps per optimizer step in dp, ddp and zero (default: "
         "the scenario's); --batch-size is the global batch of the whole step")
      ->check(integer_in(1, kMaxSteps))
      ->default_str("");
  cmd.add_option_function<std::string>(
         "--no-sync", [&r](const std::string& v) { r.no_sync = v == "on"; },
         "DDP no_sync() on every accumulation micro-step but the last: on (default) or off "
         "(every micro-step allreduces)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd.add_option("--comm-hook", r.comm_hook, "DDP communication hook: allreduce, fp16, bf16")
      ->check(CLI::IsMember(run::comm_hook_choices()));
  cmd.add_option("--warmup", r.warmup, "Perf phase: warm-up steps discarded before timing")
      ->check(integer_in(0, kMaxSteps));
  cmd.add_flag("--strong", r.strong,
               "Strong scaling: the single-device baseline trains the whole global batch");
  cmd.add_flag("--sync-bn", r.sync_bn, "Convert BatchNorm to SyncBN under DDP");
  cmd.add_flag("--quiet", r.quiet, "No progress line on a terminal");
}

}  // namespace

void add_shared_run_flags(CLI::App& cmd, run::RunRequest& r) {
  // --help shows each flag's default (the value RunRequest starts with).
  cmd.option_defaults()->always_capture_default();
  add_workload_flags(cmd, r);
  add_machine_flags(cmd, r);
  add_engine_flags(cmd, r);
  cmd.add_option("--repeats", r.repeats,
                 "Perf phase: measure it R times, repeats 2..R each in fresh processes, and keep "
                 "every timed step (`gate` decides with the repeats: docs/gate.md)")
      ->check(integer_in(1, kMaxRepeats));
}

void add_run_flags(CLI::App& cmd, run::RunRequest& r) {
  add_shared_run_flags(cmd, r);
  add_list_option(cmd, "--modes", r.modes, run::modes_help())
      ->allow_extra_args(false)  // the words after it are KEY VALUE overrides
      ->default_str("single,dp,ddp without --gpus; with --gpus K: single,ddp (single for K = 1)");
  cmd.add_option("--gpus,--world-size", r.world_size, "World size K: ranks, one process each")
      ->default_str("without --modes: every usable GPU, else 2 CPU ranks; with --modes: 1")
      ->check(integer_at_least(1));
  cmd.add_option("--inject-fault", r.inject_fault, run::inject_fault_help());
  cmd.add_option("--grad-check", r.grad_check, "Gradient comparison: auto, full, fingerprint")
      ->check(CLI::IsMember(run::grad_check_choices()));
  cmd.add_option_function<std::string>(
         "--comparison",
         [&r](const std::string& name) { r.comparison = run::comparison_from(name); },
         "How modes are compared: lockstep (every step from the reference's state), free (each "
         "trains on its own), auto (lockstep below float64)")
      ->check(CLI::IsMember(run::comparison_choices()))
      ->default_str(run::comparison_name(run::ComparisonChoice::kAuto));
  cmd.add_flag("--check-only", r.check_only, "Only the correctness checks, no perf phase");
  cmd.add_flag("--perf-only", r.perf_only, "Only the perf phase, no correctness checks");
  cmd.add_flag("--export-batches", r.export_batches,
               "Also write batches.pt for reference/torch_ddp_oracle.py");
  cmd.add_flag("--trace", r.trace,
               "Also write trace.pt: every step's forward outputs, loss, gradients before and "
               "after the reduction, updates, optimizer state and buffers of every mode, for "
               "`ddpbench diff A B`");
  cmd.add_flag("--bisect", r.bisect,
               "On a failing check, re-run in float64 and say whether the difference persists "
               "(an algorithm difference) or vanishes (rounding)");
  cmd.add_option("--checkpoint-every", r.checkpoint_every,
                 "Save a checkpoint of every mode's checked training after every N-th step "
                 "(checkpoint_<mode>_step<N>.pt in --out; a file torch.load reads)")
      ->check(integer_in(1, kMaxSteps))
      ->default_str("");
  cmd.add_option("--checkpoint-prefix", r.checkpoint_prefix,
                 "Prefix of the checkpoint's model keys: none (default) or module. (as a "
                 "DistributedDataParallel model's state_dict names them)")
      ->check(CLI::IsMember({"", "module."}));
  cmd.add_option("--resume", r.resume,
                 "Continue from a checkpoint: every mode's checked training starts from its state "
                 "at its step and runs to --steps")
      ->check(non_empty_path(
          "pass a checkpoint file (checkpoint_<mode>_step<N>.pt), or leave --resume out to train "
          "from scratch"));
  cmd.add_option("--eval-size", r.eval_size,
                 "Evaluation pass after training (classifiers): samples of the held-out set; 0 "
                 "skips the pass")
      ->default_str("the scenario's: 512, 128 for ResNet-18")
      ->check(integer_at_least(0));
}

std::vector<std::string> command_line(const run::RunRequest& r) {
  // A file names its base (and --config excludes --scenario).
  std::vector<std::string> a = {"ddpbench", "run"};
  a.insert(a.end(), {r.config.empty() ? "--scenario" : "--config",
                     r.config.empty() ? r.scenario : r.config});
  auto option = [&a](const char* flag, const std::string& value) {
    a.insert(a.end(), {flag, value});
  };
  auto number = [&option](const char* flag, auto value) {
    option(flag, fmt::format("{}", value));  // shortest round-trip form for doubles
  };
  auto flag = [&a](const char* name, bool set) {
    if (set) a.emplace_back(name);
  };
  for (const run::KeyFlag& f : run::key_flags(r)) {
    if (!f.value.empty()) option(f.flag, f.value);
  }
  if (!r.modes.empty()) option("--modes", fmt::format("{}", fmt::join(r.modes, ",")));
  if (r.steps > 0) number("--steps", r.steps);
  if (r.batch_size > 0) number("--batch-size", r.batch_size);
  if (r.seed >= 0) number("--seed", r.seed);
  flag("--drop-last", r.drop_last);
  if (!r.dtype.empty()) option("--dtype", r.dtype);
  if (!r.data_dir.empty()) option("--data-dir", r.data_dir);
  option("--out", r.out);
  if (r.threads > 0) number("--threads", r.threads);
  number("--gpus", r.world_size);
  option("--device", run::device_name(r.device));
  flag("--share-gpus", r.share_gpus);
  flag("--oversubscribe", r.oversubscribe);
  flag("--no-pin-cores", r.no_pin_cores);
  flag("--debug-collectives", r.debug_collectives);
  option("--tf32", r.tf32 ? "on" : "off");
  if (!r.backend.empty()) option("--backend", r.backend);
  option("--master-addr", r.master_addr);
  number("--timeout", r.timeout);
  option("--ddp-impl", r.ddp_impl);
  if (r.bucket_cap_given) number("--bucket-cap-mb", r.bucket_cap_mb);
  number("--first-bucket-mb", r.first_bucket_mb);
  flag("--static-graph", r.static_graph);
  flag("--gradient-as-bucket-view", r.gradient_as_bucket_view);
  flag("--no-broadcast-buffers", r.no_broadcast_buffers);
  flag("--find-unused-parameters", r.find_unused_parameters);
  if (r.zero_stage > 0) number("--zero-stage", r.zero_stage);
  if (r.shard_group > 0) number("--shard-group", r.shard_group);
  if (r.accumulation_steps > 0) number("--accumulation-steps", r.accumulation_steps);
  option("--no-sync", r.no_sync ? "on" : "off");
  option("--comm-hook", r.comm_hook);
  if (!r.inject_fault.empty()) option("--inject-fault", r.inject_fault);
  option("--grad-check", r.grad_check);
  option("--comparison", run::comparison_name(r.comparison));
  number("--warmup", r.warmup);
  if (r.repeats > 1) number("--repeats", r.repeats);
  flag("--check-only", r.check_only);
  flag("--perf-only", r.perf_only);
  flag("--strong", r.strong);
  flag("--sync-bn", r.sync_bn);
  flag("--quiet", r.quiet);
  flag("--export-batches", r.export_batches);
  flag("--trace", r.trace);
  flag("--bisect", r.bisect);
  if (r.eval_size >= 0) number("--eval-size", r.eval_size);
  if (r.checkpoint_every > 0) number("--checkpoint-every", r.checkpoint_every);
  if (!r.checkpoint_prefix.empty()) option("--checkpoint-prefix", r.checkpoint_prefix);
  if (!r.resume.empty()) option("--resume", r.resume);
  // After "--", so that an override's value reads as a value even when it starts with '-'.
  if (!r.overrides.empty()) {
    a.emplace_back("--");
    a.insert(a.end(), r.overrides.begin(), r.overrides.end());
  }
  return a;
}

}  // namespace ddpbench::cli
