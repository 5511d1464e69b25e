// machine_rows.h — where and how the processes run, the DDP engine, zero, accumulation and the perf
// phase. Rows of the run options table (run_options.h, which walks every group in --help's order;
// run_option.h says what a row holds).
#pragma once

#include "input_bounds.h"
#include "requests/flag_choices.h"
#include "requests/run_option.h"
#include "requests/run_request.h"

namespace ddpbench::requests {

// Where and how the processes run: output, threads, device, collectives, rendezvous, timeout.
template <typename V, typename R>
void machine_options(V& v, R& r) {
  v(option("--out", "Output directory for the report files")
        .reported_as(kReportArgv)
        .always_written(),
    r.out);
  v(option("--threads", "Intra-op threads per process (default: cores / ranks)")
        .integers(1, kNoUpperBound)
        .shows("")
        .reported_as("threads"),
    r.threads);
  v(option("--device", "auto (CUDA when this build and machine have it), cpu, cuda")
        .choices(device_choices())
        .reported_as("context.device")
        .always_written(),
    r.device);
  v(option("--oversubscribe",
           "Allow more ranks than 4 per core (at least 8) and more --threads than cores")
        .reported_as(kReportArgv),
    r.oversubscribe);
  v(option("--no-pin-cores",
           "Leave spawned ranks unpinned (by default each runs on cores of its own when they fit: "
           "docs/gate.md)")
        .reported_as("cpu_pinning"),
    r.no_pin_cores);
  v(option("--debug-collectives",
           "Before every collective the ranks compare what they are about to issue (op, sequence "
           "number, step, dtype, count) and stop at once, exit 3, when they differ, instead of "
           "hanging or reducing mismatched buffers (ddp, zero; costs a small allgather per "
           "collective)")
        .reported_as(kReportArgv),
    r.debug_collectives);
  v(option("--share-gpus", "Allow several ranks or replicas per CUDA device (DDP over gloo or mpi)")
        .reported_as(kReportArgv),
    r.share_gpus);
  v(option("--tf32", "TensorFloat-32 on CUDA: off (default) or on")
        .on_off()
        .reported_as("context.numerics")
        .always_written(),
    r.tf32);
  v(option("--data-on-device",
           "Materialise the dataset once on the run's device and gather (and augment) each batch "
           "there, byte for byte the host collate's batch")
        .reported_as(kReportArgv),
    r.data_on_device);
  v(option("--backend", backend_help()).choices(backend_choices()).reported_as("ddp.backend"),
    r.backend);
  v(option("--master-addr", "Address the workers rendezvous on")
        .reported_as(kReportArgv)
        .always_written(),
    r.master_addr);
  v(option("--timeout", "Seconds without progress before a rank is declared hung")
        .reported_as(kReportArgv)
        .always_written(),
    r.timeout);
}

// The DDP engine and its options.
template <typename V, typename R>
void engine_options(V& v, R& r) {
  v(option("--ddp-impl",
           "DDP engine: bucketed (ddpbench's, overlapping), naive, or c10d (PyTorch's own Reducer, "
           "as torch.nn.parallel.DistributedDataParallel drives it)")
        .choices(ddp_impl_choices())
        .reported_as("ddp.impl")
        .always_written(),
    r.ddp_impl);
  v(option("--bucket-cap-mb",
           "DDP bucket cap in MiB (zero stages 1 and 2 bucket their gradients as DDP does)")
        .given_flag(&RunRequest::bucket_cap_given)
        .reported_as("ddp.bucket_cap_bytes"),
    r.bucket_cap_mb);
  v(option("--static-graph",
           "DDP static_graph=True (--ddp-impl c10d): the first iteration's reduction is delayed to "
           "the end of backward and the graph is assumed fixed after it")
        .reported_as("ddp.static_graph"),
    r.static_graph);
  v(option("--gradient-as-bucket-view",
           "DDP gradient_as_bucket_view=True (--ddp-impl c10d; ddpbench's bucketed engine always "
           "works this way)")
        .reported_as("ddp.gradient_as_bucket_view"),
    r.gradient_as_bucket_view);
  v(option("--first-bucket-mb", "DDP first bucket size in MiB")
        .reported_as("ddp.first_bucket_bytes")
        .always_written(),
    r.first_bucket_mb);
  v(option("--no-broadcast-buffers", "Do not broadcast rank 0's buffers before each forward")
        .reported_as("ddp.broadcast_buffers"),
    r.no_broadcast_buffers);
  v(option("--find-unused-parameters", "Reduce parameters without a gradient as zeros")
        .reported_as("ddp.find_unused_parameters"),
    r.find_unused_parameters);
}

// zero's stage and groups, accumulation, the perf phase, SyncBN.
template <typename V, typename R>
void step_options(V& v, R& r) {
  v(option("--zero-stage",
           "The zero mode's ZeRO stage: 1 (optimizer state sharded, as PyTorch's "
           "ZeroRedundancyOptimizer), 2 (gradients reduce-scattered to their owners too) or 3 "
           "(parameters sharded on dim 0 too, gathered for forward and backward, as FSDP)")
        .one_of({1, 2, 3}, "the ZeRO stage")
        .shows("1")
        .reported_as("zero_stage"),
    r.zero_stage);
  v(option("--shard-group",
           "Hybrid sharding (HSDP) in the zero mode at stage 2 or 3: shard over groups of S ranks "
           "and replicate across the K/S groups, as FSDP2's fully_shard over a (K/S, S) mesh "
           "(default: the whole world)")
        .integers(1, 1 << 20)
        .shows("")
        .reported_as("shard_group"),
    r.shard_group);
  v(option("--accumulation-steps",
           "Gradient accumulation: micro-steps per optimizer step in dp, ddp and zero (default: "
           "the scenario's); --batch-size is the global batch of the whole step")
        .integers(1, kMaxSteps)
        .shows("")
        .reported_as("accumulation_steps"),
    r.accumulation_steps);
  v(option("--no-sync",
           "DDP no_sync() on every accumulation micro-step but the last: on (default) or off "
           "(every micro-step allreduces)")
        .on_off()
        .reported_as("no_sync")
        .always_written(),
    r.no_sync);
  v(option("--comm-hook", "DDP communication hook: allreduce, fp16, bf16")
        .choices(comm_hook_choices())
        .reported_as("ddp.comm_hook")
        .always_written(),
    r.comm_hook);
  v(option("--warmup", "Perf phase: warm-up steps discarded before timing")
        .integers(0, kMaxSteps)
        .reported_as("warmup_steps")
        .always_written(),
    r.warmup);
  v(option("--strong", "Strong scaling: the single-device baseline trains the whole global batch")
        .reported_as("scaling"),
    r.strong);
  v(option("--sync-bn", "Convert BatchNorm to SyncBN under DDP").reported_as("ddp.sync_bn"),
    r.sync_bn);
  v(option("--quiet", "No progress line on a terminal").reported_as(kReportArgv), r.quiet);
  v(option("--repeats",
           "Perf phase: measure it R times, repeats 2..R each in fresh processes, and keep every "
           "timed step (`gate` decides with the repeats: docs/gate.md)")
        .integers(1, kMaxRepeats)
        .reported_as("repeats"),
    r.repeats);
}

}  // namespace ddpbench::requests
