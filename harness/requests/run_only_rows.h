// run_only_rows.h — what only `run` takes: modes, world size, faults, the checks' form, phases and
// extra outputs. Rows of the run options table (run_options.h, which walks every group in --help's
// order; run_option.h says what a row holds).
#pragma once

#include "input_bounds.h"
#include "requests/flag_choices.h"
#include "requests/run_option.h"
#include "requests/run_request.h"

namespace ddpbench::requests {

// What only `run` takes: the modes and world size, fault injection, the checks' form, the phases.
template <typename V, typename R>
void run_only_options(V& v, R& r) {
  v(option("--modes", modes_help())
        .shows("single,dp,ddp without --gpus; with --gpus K: single,ddp (single for K = 1)")
        .reported_as("modes")
        .run_only(),
    r.modes);
  v(option("--gpus,--world-size", "World size K: ranks, one process each")
        .integers(1, kNoUpperBound)
        .shows("without --modes: every usable GPU, else 2 CPU ranks; with --modes: 1")
        .given_flag(&RunRequest::world_size_given)
        .reported_as("world_size")
        .run_only()
        .always_written(),
    r.world_size);
  v(option("--inject-fault", inject_fault_help()).reported_as("inject_fault").run_only(),
    r.inject_fault);
  v(option("--grad-check", "Gradient comparison: auto, full, fingerprint")
        .choices(grad_check_choices())
        .reported_as("gradient_check")
        .run_only()
        .always_written(),
    r.grad_check);
  v(option("--comparison",
           "How modes are compared: lockstep (every step from the reference's state), free (each "
           "trains on its own), auto (lockstep below float64)")
        .choices(comparison_choices())
        .reported_as("comparison")
        .run_only()
        .always_written(),
    r.comparison);
  v(option("--check-only", "Only the correctness checks, no perf phase")
        .reported_as(kReportArgv)
        .run_only(),
    r.check_only);
  v(option("--perf-only", "Only the perf phase, no correctness checks")
        .reported_as(kReportArgv)
        .run_only(),
    r.perf_only);
}

// What only `run` writes besides its report: batches, trace, bisection, checkpoints, evaluation.
template <typename V, typename R>
void output_options(V& v, R& r) {
  v(option("--export-batches", "Also write batches.pt for reference/torch_ddp_oracle.py")
        .reported_as(kReportArgv)
        .run_only(),
    r.export_batches);
  v(option("--trace",
           "Also write trace.pt: every step's forward outputs, loss, gradients before and after "
           "the reduction, updates, optimizer state and buffers of every mode, for `ddpbench diff "
           "A B`")
        .reported_as("trace_file")
        .run_only(),
    r.trace);
  v(option("--bisect",
           "On a failing check, re-run in float64 and say whether the difference persists (an "
           "algorithm difference) or vanishes (rounding)")
        .reported_as(kReportArgv)
        .run_only(),
    r.bisect);
  v(option("--checkpoint-every",
           "Save a checkpoint of every mode's checked training after every N-th step "
           "(checkpoint_<mode>_step<N>.pt in --out; a file torch.load reads)")
        .integers(1, kMaxSteps)
        .shows("")
        .reported_as(kReportArgv)
        .run_only(),
    r.checkpoint_every);
  v(option("--checkpoint-prefix",
           "Prefix of the checkpoint's model keys: none (default) or module. (as a "
           "DistributedDataParallel model's state_dict names them)")
        .choices({"", "module."})
        .reported_as(kReportArgv)
        .run_only(),
    r.checkpoint_prefix);
  v(option("--resume",
           "Continue from a checkpoint: every mode's checked training starts from its state at "
           "its step and runs to --steps")
        .path("pass a checkpoint file (checkpoint_<mode>_step<N>.pt), or leave --resume out to "
              "train from scratch")
        .reported_as("first_step")
        .run_only(),
    r.resume);
  v(option("--eval-size",
           "Evaluation pass after training (classifiers): samples of the held-out set; 0 skips "
           "the pass")
        .integers(0, kNoUpperBound)
        .shows("the scenario's: 512, 128 for ResNet-18")
        .reported_as("eval_size")
        .run_only(),
    r.eval_size);
}

}  // namespace ddpbench::requests
