// run_config.h — what a run was, as report.json's `context` and `config` record it: where it ran
// (RunContext), what it trained and how (RunConfig, with the sampler's partition and the DDP
// settings). The results it produced are run_record.h's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::reports {

struct RunContext {
  std::string ddpbench_version;
  std::string git_revision;
  std::string host;
  int64_t cores = 0;
  std::string compiler;
  std::string libtorch_version;
  std::string gloo_version;
  std::string mpi_version;
  std::string nccl_version;  // empty when built without NCCL
  std::string gpu_status;    // e.g. "no CUDA device (...)"
  std::string device;        // what the run trained on: "cpu" or "cuda"
  std::string gpu_devices;   // e.g. "NVIDIA H100 80GB HBM3 x1"; empty without a visible GPU
  std::string gpu_driver;    // e.g. "580.159.04 (CUDA 13.0)"
  std::string cuda_runtime;  // libtorch's CUDA runtime, e.g. "13.0"
  std::string cudnn_version;
  // The numerics switches the run used, e.g. "TF32 off; check phase deterministic ...".
  std::string numerics;
  std::string started_at;  // ISO 8601, UTC
  std::vector<std::string> argv;
};

// What DistributedSampler did with the dataset this run (padding / dropping change what an
// epoch means, so they are recorded, not just applied).
struct SamplerRecord {
  int64_t dataset_size = 0;
  int64_t num_replicas = 1;
  bool shuffle = true;
  bool drop_last = false;
  int64_t seed = 0;
  int64_t num_samples = 0;  // per rank per epoch
  int64_t total_size = 0;
  int64_t padded = 0;   // duplicated samples per epoch
  int64_t dropped = 0;  // samples left out per epoch
  // Epoch 0's first indices per rank (at most kPartitionPreview each) and, in parallel,
  // whether each is a padding duplicate: what the HTML report draws.
  std::vector<std::vector<int64_t>> preview;
  std::vector<std::vector<bool>> preview_padding;
};

inline constexpr int64_t kPartitionPreview = 24;

// The DDP settings a run used: each changes what DDP computes or how fast, so reports record
// them and the gate refuses to compare runs that differ in one.
struct DdpSettings {
  // "bucketed" or "naive" (ddpbench's engines), "c10d" (PyTorch's Reducer, of the libtorch the
  // environment block names).
  std::string impl = "bucketed";
  int64_t bucket_cap_bytes = 0;
  int64_t first_bucket_bytes = 0;
  std::string comm_hook = "allreduce";
  bool broadcast_buffers = true;
  bool find_unused_parameters = false;
  bool sync_bn = false;
  std::string backend;                   // the collective backend the DDP ranks used
  bool static_graph = false;             // c10d only
  bool gradient_as_bucket_view = false;  // c10d only (ddpbench's bucketed engine always is)
};

struct RunConfig {
  std::string scenario;
  std::string model;
  std::string dataset;
  std::string loss;
  std::string optimizer;
  std::vector<std::string> modes;
  int64_t steps = 0;
  int64_t global_batch = 0;
  int64_t local_batch = 0;
  int64_t world_size = 1;
  int64_t steps_per_epoch = 0;
  int64_t seed = 0;
  int64_t threads = 0;
  std::string dtype;
  // --amp: "off", "bf16" (autocast to bfloat16) or "fp16" (float16 with a GradScaler).
  std::string amp = "off";
  std::string data_dir;  // empty: the scenario's default data
  SamplerRecord sampler;
  DdpSettings ddp;
  int64_t warmup_steps = 0;  // perf phase steps discarded before timing
  int64_t repeats = 1;       // --repeats: the perf phase's repeats, each in fresh processes
  // Whether spawned ranks ran on cores of their own (launch/core_pinning.h, Note [Pinned ranks]);
  // a schema 8 report did not record it.
  std::string cpu_pinning = "unrecorded (a report from before schema 9)";
  std::string scaling = "weak";  // "weak" or "strong" (the single-device baseline's batch)
  // How the scenario was configured ("--config f.yaml TRAIN.STEPS 2"; empty for a plain
  // built-in), and the scenario as the file `ddpbench run --config` reproduces it from.
  std::string scenario_config;
  std::string scenario_yaml;
  // Training settings outside the scenario that change what every mode computes.
  int64_t accumulation_steps = 1;  // micro-steps per optimizer step (dp, ddp, zero)
  bool no_sync = true;             // DDP's no_sync() over all but the last micro-step
  std::string comparison;          // "lockstep" or "free-running"
  std::string gradient_check;      // "full" or "fingerprint" (or "auto" before resolution)
  std::string inject_fault;        // --inject-fault as given; "" = none (or a slowdown:)
  // --inject-fault slow:rank=R,ms=M, the one fault that changes only the timings: recorded apart,
  // so that the gate compares a slowed run with a clean one (it stands for a slower commit).
  std::string slowdown;
  int64_t first_step = 0;  // the --resume checkpoint's step; 0 = trained from scratch
  int64_t eval_size = 0;   // held-out samples of the evaluation pass; 0 = none
  // --model FILE as given ("" = the scenario's own model; `model` holds the file's hash), and
  // what ddpbench found in it: scripted or traced, BatchNorm, random draws, graph executor.
  std::string model_file;
  std::string model_notes;
  int64_t zero_stage = 0;  // the zero mode's ZeRO stage (1, 2, 3); 0 without the zero mode
  // The zero mode's shard group under HSDP (--shard-group S: K/S replicas of an S-way shard);
  // 0 when it shards over the whole world (and in reports before schema 11).
  int64_t shard_group = 0;
  // --trace: the trace file in the report's folder and its SHA-256 ("" without --trace), so that
  // `ddpbench diff` reads the very file this run wrote.
  std::string trace_file;
  std::string trace_sha256;
  // "--flag value" for each run option recorded only as given (requests/run_options.h); empty
  // for a run that set none, and then absent from report.json.
  std::vector<std::string> options;
};

}  // namespace ddpbench::reports
