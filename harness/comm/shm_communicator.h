// shm_communicator.h — `--backend shm`: ranks of one host sum gradients through shared memory
// instead of TCP loopback. Each rank maps every rank's segment (comm/shm_segment.h); an allreduce
// runs in chunks, each a reduce-scatter (rank r sums slice r of every rank's chunk) and an
// allgather (every rank copies each slice from the rank that summed it), with futex waits on
// per-rank counters between the phases. Every element is summed by one rank in rank order, so
// every rank gets the same bits. Allreduces run on one background thread in launch order (DDP
// overlaps them with backward); broadcast, allgather and barrier, which DDP uses once per step
// at most, go through an inner gloo communicator. CPU tensors; device tensors are staged.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "comm/communicator.h"
#include "comm/store.h"

namespace ddpbench::comm {

struct ShmOptions {
  int rank = 0;
  int world_size = 1;
  std::string interface_address = "127.0.0.1";  // the inner gloo communicator's
  // A peer that does not reach a phase within this fails the collective, naming the rank.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  // Bytes per chunk; each rank's segment holds two (one being read while the next is written).
  size_t chunk_bytes = size_t{8} << 20;
  // The run's segment-name prefix (comm/shm_names.h), chosen by the launching parent so that it
  // can remove the segments however the run ends; "" = rank 0 makes one (another launcher).
  std::string segment_prefix;
};

// Throws InputError when the ranks are not all on this host, std::runtime_error when /dev/shm
// cannot hold the segments.
std::unique_ptr<Communicator> make_shm_communicator(const std::shared_ptr<Store>& store,
                                                    const ShmOptions& options);

}  // namespace ddpbench::comm
