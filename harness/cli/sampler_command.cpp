// sampler_command.cpp — see sampler_command.h.
#include "cli/sampler_command.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/validators.h"
#include "data/distributed_sampler.h"
#include "data/libtorch_sampler.h"
#include "errors.h"

namespace ddpbench::cli {
namespace {

struct Partition {
  std::vector<std::vector<int64_t>> ranks;
  std::vector<std::vector<bool>> is_padding;  // duplicates added to even out the ranks
  int64_t num_samples = 0;
  int64_t total_size = 0;
  int64_t padded = 0;
  int64_t dropped = 0;
};

Partition torch_partition(const SamplerCommandOptions& o) {
  data::DistributedSampler s({o.dataset_size, o.replicas, o.shuffle, o.seed, o.drop_last});
  s.set_epoch(o.epoch);
  Partition p;
  p.ranks = s.all_indices();
  p.num_samples = s.num_samples();
  p.total_size = s.total_size();
  p.padded = s.padded_count();
  p.dropped = s.dropped_count();
  for (int64_t r = 0; r < o.replicas; ++r) {
    std::vector<bool> pad;
    for (int64_t j = 0; j < p.num_samples; ++j) pad.push_back(s.is_padding(r, j));
    p.is_padding.push_back(pad);
  }
  return p;
}

Partition libtorch_partition(const SamplerCommandOptions& o) {
  Partition p;
  p.ranks =
      data::libtorch_partitions({o.dataset_size, o.replicas, o.shuffle, o.drop_last, o.epoch});
  p.num_samples = p.ranks.empty() ? 0 : static_cast<int64_t>(p.ranks[0].size());
  p.total_size = p.num_samples * o.replicas;
  p.padded = std::max<int64_t>(0, p.total_size - o.dataset_size);
  p.dropped = std::max<int64_t>(0, o.dataset_size - p.total_size);
  // libtorch pads before shuffling, so padding is only recognisable as a repeated index.
  std::set<int64_t> seen;
  for (const auto& rank : p.ranks) {
    std::vector<bool> pad;
    for (int64_t i : rank) pad.push_back(!seen.insert(i).second);
    p.is_padding.push_back(pad);
  }
  return p;
}

// The sampler materialises every index of an epoch (as PyTorch's does): 100 M indices are 800 MB,
// and 10^12 ended in std::bad_alloc. Seed + epoch must not overflow int64 (PyTorch adds them).
constexpr long long kMaxDatasetSize = 100'000'000;
constexpr long long kMaxReplicas = 1 << 20;
constexpr long long kMaxSeed = 1LL << 62;

}  // namespace

CLI::App* add_sampler_command(CLI::App& app, SamplerCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("sampler", "Show DistributedSampler partitions per rank");
  cmd->add_option("--dataset-size", o.dataset_size, "Number of samples N")
      ->required()
      ->check(integer_in(1, kMaxDatasetSize));
  cmd->add_option("--replicas", o.replicas, "Number of replicas K (world size)")
      ->check(integer_in(1, kMaxReplicas));
  cmd->add_flag("--drop-last", o.drop_last, "Drop the tail instead of padding with duplicates");
  cmd->add_flag("--shuffle", o.shuffle, "Shuffle with randperm seeded seed + epoch");
  cmd->add_option("--seed", o.seed, "Shuffle seed")->check(integer_in(0, kMaxSeed));
  cmd->add_option("--epoch", o.epoch, "Epoch (set_epoch)")->check(integer_in(0, kMaxSeed));
  cmd->add_option("--impl", o.impl,
                  "torch: PyTorch-exact (used by ddpbench); libtorch: C++ samplers")
      ->check(CLI::IsMember({"torch", "libtorch"}));
  cmd->add_option("--format", o.format, "Output format")->check(CLI::IsMember({"text", "json"}));
  return cmd;
}

int run_sampler_command(const SamplerCommandOptions& o) {
  const Partition p = o.impl == "torch" ? torch_partition(o) : libtorch_partition(o);
  if (o.format == "json") {
    nlohmann::json j{{"impl", o.impl},
                     {"dataset_size", o.dataset_size},
                     {"replicas", o.replicas},
                     {"drop_last", o.drop_last},
                     {"shuffle", o.shuffle},
                     {"seed", o.seed},
                     {"epoch", o.epoch},
                     {"num_samples", p.num_samples},
                     {"total_size", p.total_size},
                     {"padded", p.padded},
                     {"dropped", p.dropped},
                     {"ranks", p.ranks},
                     {"is_padding", p.is_padding}};
    std::cout << j.dump() << "\n";
    return kExitOk;
  }
  fmt::print(
      "DistributedSampler ({}): dataset_size={} replicas={} shuffle={} drop_last={} seed={} "
      "epoch={}\n",
      o.impl == "torch" ? "PyTorch-exact" : "libtorch C++", o.dataset_size, o.replicas, o.shuffle,
      o.drop_last, o.seed, o.epoch);
  fmt::print("num_samples={} total_size={} padded={} dropped={}\n", p.num_samples, p.total_size,
             p.padded, p.dropped);
  bool any_padding = false;
  for (size_t r = 0; r < p.ranks.size(); ++r) {
    std::string line = fmt::format("rank {}:", r);
    for (size_t j = 0; j < p.ranks[r].size(); ++j) {
      const bool pad = p.is_padding[r][j];
      any_padding = any_padding || pad;
      line += fmt::format(" {}{}", p.ranks[r][j], pad ? "*" : "");
    }
    fmt::print("{}\n", line);
  }
  if (any_padding) fmt::print("(* = padding: a duplicate of a sample already in the epoch)\n");
  return kExitOk;
}

}  // namespace ddpbench::cli
