// run_request.h — what a user asked for, as plain data: the typed form of the command line that
// the CLI fills in and the engine validates (run_setup.h). Each run option's flag, help, check,
// scenario key and report field is its row in run_options.h, beside its field here. No CLI11 and no
// torch here, so the CLI can include it and nothing below the engine leaks up to it. `scale` builds
// each of its points as a RunRequest and hands it to the same engine.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "name_table.h"

namespace ddpbench::requests {

// --comparison: auto (lockstep below float64, else free-running), lockstep (every step of a
// judged mode from its reference's state), free (each mode trains on its own).
enum class ComparisonChoice { kAuto, kLockstep, kFree };
inline constexpr NameTable<ComparisonChoice, 3> kComparisonNames{{
    {ComparisonChoice::kAuto, "auto"},
    {ComparisonChoice::kLockstep, "lockstep"},
    {ComparisonChoice::kFree, "free"},
}};

// --device (run, scale, comm): auto (CUDA when this build's libtorch has it and a device is
// usable), cpu, cuda.
enum class DeviceChoice { kAuto, kCpu, kCuda };
inline constexpr NameTable<DeviceChoice, 3> kDeviceNames{{
    {DeviceChoice::kAuto, "auto"},
    {DeviceChoice::kCpu, "cpu"},
    {DeviceChoice::kCuda, "cuda"},
}};

struct RunRequest {
  // Scenario name (see `ddpbench list`).
  std::string scenario = "cifar_resnet18";
  // A YAML scenario file naming its built-in base (scenarios/scenario_config.h); empty = none.
  // The CLI refuses it together with --scenario.
  std::string config;
  // KEY VALUE pairs over the scenario's keys (TRAIN.BATCH_SIZE 128), applied after the file.
  std::vector<std::string> overrides;
  // A TorchScript file whose model replaces the scenario's (scenarios/script_scenario.h); empty =
  // the scenario's own model.
  std::string model;
  // A torch.save file of {"inputs", "targets"} trained on instead of the scenario's data
  // (inputs/data_file.h); empty = the scenario's own data.
  std::string data_file;
  // Synthetic data of a declared shape instead of the scenario's (inputs/synthetic_data.h), and the
  // loss: each sets its scenario key (DATA.INPUT_SHAPE, ..., LOSS.NAME), which parses and checks
  // the text; empty = the key's value in the scenario.
  std::string input_shape;
  std::string input_dtype;
  std::string vocab_size;
  std::string num_classes;
  std::string target_shape;
  std::string loss;
  // Automatic mixed precision: off, bf16, fp16 (sets TRAIN.AMP); empty = the scenario's.
  std::string amp;
  // --amp fp16's GradScaler: initial scale and growth interval (TRAIN.GRAD_SCALER_*).
  std::string grad_scaler_init;
  std::string growth_interval;
  // Modes to run (`ddpbench run --help` lists them); empty = single,dp,ddp when --gpus is not given
  // either (run/default_comparison.h), else single,ddp with a world size > 1, single with 1.
  std::vector<std::string> modes;
  // Training steps (checked steps, and timed steps of the perf phase); 0 = the scenario's.
  int64_t steps = 0;
  // With steps 0: at most this many of the scenario's (0 = no cap); set for a bare CPU run by
  // run/default_comparison.h.
  int64_t max_default_steps = 0;
  // Global batch size (all ranks together); 0 = the scenario's.
  int64_t batch_size = 0;
  // Seed for model init, sampler shuffle and augmentation; -1 = the scenario's.
  int64_t seed = -1;
  // DistributedSampler(drop_last=True): drop the epoch's tail instead of padding it with
  // duplicates (also when the scenario pads).
  bool drop_last = false;
  // float32 or float64; empty = the scenario's.
  std::string dtype;
  // Dataset directory; empty = the scenario's default data.
  std::string data_dir;
  // Output directory for the report and state files.
  std::string out = "ddpbench_out";
  // Intra-op threads per process; 0 = cores / ranks (at least 1).
  int64_t threads = 0;
  DeviceChoice device = DeviceChoice::kAuto;
  // Allow several DDP ranks or DP replicas per CUDA device (DDP then over gloo or mpi: NCCL
  // refuses two ranks on one GPU).
  bool share_gpus = false;
  // --tf32 on: TensorFloat-32 in CUDA matmuls and convolutions (off by default).
  bool tf32 = false;
  // --data-on-device: the dataset materialised on the run's device, batches gathered there.
  bool data_on_device = false;
  // World size K: DDP ranks (one process each), DP replicas. With neither --gpus nor --modes,
  // run/default_comparison.h picks it (every usable GPU, else 2 CPU ranks).
  int64_t world_size = 1;
  // Whether --gpus was given: under an external launcher WORLD_SIZE decides, and a --gpus that
  // says otherwise is a contradiction, not a value to drop silently.
  bool world_size_given = false;
  // Allow more ranks or threads per host than the cores can serve (run_setup.cpp's limits).
  bool oversubscribe = false;
  // --no-pin-cores: spawned ranks run wherever the OS puts them (launch/core_pinning.h).
  bool no_pin_cores = false;
  // --debug-collectives: before every collective the ranks compare its fingerprint and stop at
  // once on a mismatch (comm/recording_communicator.h).
  bool debug_collectives = false;
  // Collective backend, one of requests/flag_choices.h's backend_choices(); empty: the default.
  std::string backend;
  // Address the spawned workers rendezvous on.
  std::string master_addr = "127.0.0.1";
  // Seconds a rank may go without progress before the run is stopped.
  double timeout = 300;
  // DDP gradient reduction: bucketed or naive.
  std::string ddp_impl = "bucketed";
  // Bucket cap and first bucket size in MiB.
  double bucket_cap_mb = 25;
  bool bucket_cap_given = false;  // --bucket-cap-mb was on the command line
  bool static_graph = false;
  bool gradient_as_bucket_view = false;
  double first_bucket_mb = 1;
  bool no_broadcast_buffers = false;
  bool find_unused_parameters = false;
  // The zero mode's ZeRO stage: 1 (sharded optimizer state) or 2 (and sharded gradients); 0 =
  // not given (stage 1).
  int64_t zero_stage = 0;
  // --shard-group S: zero as HSDP, K/S replicas of an S-way shard; 0 = not given (the world).
  int64_t shard_group = 0;
  // Gradient accumulation micro-steps A per optimizer step (dp, ddp); 0 = the scenario's.
  int64_t accumulation_steps = 0;
  // DDP's no_sync() on the first A-1 micro-steps: on (default) or off (every micro-step reduces).
  bool no_sync = true;
  // allreduce, fp16, bf16.
  std::string comm_hook = "allreduce";
  // KIND:rank=R,step=S[,eps=E][,tensor=NAME]; empty = none.
  std::string inject_fault;
  // Gradient comparison: auto, full, fingerprint.
  std::string grad_check = "auto";
  // --comparison: how a judged mode is compared with its reference.
  ComparisonChoice comparison = ComparisonChoice::kAuto;
  // Perf phase: warm-up steps discarded before the timed steps.
  int64_t warmup = 2;
  // --repeats R: the perf phase R times, repeats 2..R each in fresh processes (run/perf_repeats.h).
  int64_t repeats = 1;
  bool check_only = false;
  bool perf_only = false;
  // Strong scaling (single-device baseline at the global batch) instead of weak.
  bool strong = false;
  // Convert BatchNorm to SyncBN under DDP.
  bool sync_bn = false;
  // No progress line even on a terminal.
  bool quiet = false;
  // Also write batches.pt for reference/torch_ddp_oracle.py.
  bool export_batches = false;
  // Also write trace.pt: what every step of every mode computed, for `ddpbench diff`.
  bool trace = false;
  // On a failing check, re-run the configuration in float64 (run/bisect.h).
  bool bisect = false;
  // Checkpoints (checkpoint/checkpoint.h): the check phase of every mode saves one after every
  // N-th step (0 = none), its model keys prefixed with checkpoint_prefix ("" or "module.");
  // resume names a checkpoint every mode's check phase starts from (empty = none).
  int64_t checkpoint_every = 0;
  std::string checkpoint_prefix;
  std::string resume;
  // Evaluation pass: samples of the held-out set; -1 = the scenario's, 0 = no evaluation pass.
  int64_t eval_size = -1;
};

// The command line that makes this binary execute `request` (argv[0] is only the name ps shows):
// how `scale`, --bisect and --repeats start a run as a child process (run_options.h's
// command_line(), passed down so that the engine's tests can watch what a child is given).
using CommandLineOf = std::function<std::vector<std::string>(const RunRequest& request)>;

// `ddpbench scale`: one perf-only run per world size, merged into one report.
struct ScaleRequest {
  ScaleRequest() { base.out = "ddpbench_scale"; }
  // The configuration every point shares. batch_size is the global batch at the largest world
  // size (weak scaling: per-device batch = batch_size / largest K) or at every world size
  // (strong); out is where the merged report goes. world_size, modes and perf_only are set per
  // point.
  RunRequest base;
  std::vector<int64_t> world_sizes = {1, 2};
  // Modes timed at every world size (ddp, dp); single is the baseline and always runs.
  std::vector<std::string> modes = {"ddp"};
};

// `ddpbench report`: re-render every format from a report.json.
struct ReportRequest {
  std::string input;
  std::string out;  // empty = the input's directory
};

// `ddpbench project`: a measured run's DDP scaling projected to other device counts and links.
struct ProjectRequest {
  std::string from;  // a report.json of `run` or `scale`, or its folder
  std::vector<int64_t> devices = {8, 64, 512};
  std::vector<double> link_gbit_s = {100, 400};
  std::string algo = "ring";  // ring or tree
  double alpha_us = 5;        // per-message latency of the projected links
  std::string out = "ddpbench_project";
};

// `ddpbench gate`: compare a run with a baseline.
struct GateRequest {
  std::string baseline;
  std::string current;
  // --max-slowdown; unset: the thresholds file's, else 0.05. Given, it wins over the file's.
  std::optional<double> max_slowdown;
  std::string thresholds;        // YAML; empty = none
  std::string format = "text";   // text or md
  bool allow_missing = false;    // vanished checks / throughput are listed, not failed
  bool allow_undecided = false;  // points too noisy to judge are listed, not failed
  // --history DIR: the baseline is the newest report of DIR and the throughput's baseline the
  // lookback distribution of DIR's reports (commands/run_history.h); `baseline` then empty.
  std::string history;
  std::string order;      // --order FILE: DIR's reports in this order (one name per line)
  int64_t lookback = 20;  // --lookback: the earlier commits pooled
};

// `ddpbench ab -- RUN ARGS`: the baseline build and the current build run the same arguments in
// rounds, in a random order per round, in one job; the gate decides on the paired rounds
// (commands/execute_ab.h).
struct AbRequest {
  std::string baseline_binary;  // a ddpbench, or a build folder holding harness/ddpbench
  std::string current_binary;   // the same; empty: this program
  int64_t rounds = 10;
  uint64_t seed = 1;  // of the order within each round
  double max_slowdown = 0.05;
  bool allow_undecided = false;
  std::string format = "text";  // text or md
  std::string out = "ddpbench_ab";
  std::vector<std::string> run_args;  // after `--`: what `run` is given (no --out, --repeats)
  // --duet: each round runs both builds at the same time instead of back to back (Note [Duet
  // rounds], commands/ab_rounds.h).
  bool duet = false;
  // --calibrate: A/A rounds of the current build against itself, reported as what a gate of
  // `gate_rounds` rounds can tell on this runner (calibration.json; stats/ab_calibration.h).
  bool calibrate = false;
  int64_t gate_rounds = 10;
  std::string calibration;  // --calibration FILE: a kept calibration.json, printed with the verdict
};

// `ddpbench history RUN...`: a series of runs of successive commits, judged point by point
// (commands/execute_history.h).
struct HistoryRequest {
  std::vector<std::string> runs;  // run folders or report.json files, oldest first; or one DIR
  std::string order;              // --order FILE: the runs, one per line, oldest first
  double max_slowdown = 0.05;
  int64_t lookback = 20;
  std::string out = "ddpbench_history";
};

// `ddpbench diff A B`: the same experiment under two environments, tensor by tensor
// (commands/execute_diff.h). What a diff fails on: a divergence (beyond rounding), or with
// kIdentical any difference at all.
enum class DiffExpectation { kRounding, kIdentical };
struct DiffRequest {
  std::string a;  // a run folder (its report.json names its trace) or a trace.pt
  std::string b;
  std::string out = "ddpbench_diff";
  DiffExpectation expect = DiffExpectation::kRounding;
};

// `ddpbench comm`: collective bandwidth, nccl-tests style (commands/execute_comm.h). Sizes are text
// so that resolving them (comm_sweep/comm_plan.h) can name a bad one in the one error line.
struct CommRequest {
  // Collectives to measure, in the order given; empty = allreduce, broadcast, allgather,
  // reduce_scatter.
  std::vector<std::string> collectives;
  // Sweep: min, min x factor, ... up to max (bytes; K, M, G suffixes are powers of 1024).
  std::string min_bytes = "8";
  std::string max_bytes = "16M";
  int64_t step_factor = 2;
  // Timed calls per size, and untimed calls before them (nccl-tests: 20 and 5; fewer here, so
  // the default sweep takes seconds on a 2-core CPU host).
  int64_t iters = 10;
  int64_t warmup = 2;
  // float32 or float64.
  std::string dtype = "float32";
  std::string backend;  // empty: the default
  DeviceChoice device = DeviceChoice::kAuto;
  int64_t world_size = 2;
  bool world_size_given = false;
  // More ranks than run allows on this machine's cores (run/shared_checks.h).
  bool oversubscribe = false;
  std::string out = "ddpbench_comm";
  // Seconds a rank may go without progress before the run is stopped.
  double timeout = 300;
  // corrupt:rank=R[,collective=C]: rank R changes one element of C's result (default allreduce)
  // after every call of the check pass, so #wrong must be 1 per size and the run FAILED.
  std::string inject_fault;
};

}  // namespace ddpbench::requests
