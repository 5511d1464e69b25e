// sampler_command.h — `ddpbench sampler`: show DistributedSampler partitions (PyTorch-exact, or
// libtorch C++'s own samplers for comparison) as text or JSON.
#pragma once

#include <CLI/App.hpp>
#include <cstdint>
#include <string>

namespace ddpbench::cli {

struct SamplerCommandOptions {
  // Number of samples N in the dataset.
  int64_t dataset_size = 0;
  // Number of replicas K (world size).
  int64_t replicas = 1;
  // DistributedSampler(drop_last=True): drop the tail instead of padding.
  bool drop_last = false;
  // DistributedSampler(shuffle=True). Off by default here so the output is easy to read.
  bool shuffle = false;
  // Seed of the shuffle generator (seeded seed + epoch).
  int64_t seed = 0;
  // Epoch passed to set_epoch().
  int64_t epoch = 0;
  // "torch" (Python-exact, what ddpbench uses) or "libtorch" (C++ samplers, for comparison).
  std::string impl = "torch";
  // "text" or "json".
  std::string format = "text";
};

CLI::App* add_sampler_command(CLI::App& app, SamplerCommandOptions& options);
int run_sampler_command(const SamplerCommandOptions& options);

}  // namespace ddpbench::cli
