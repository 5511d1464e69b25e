// gloo_communicator.h — Communicator over c10d::ProcessGroupGloo (CPU collectives), with
// rendezvous through a comm::Store.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "comm/communicator.h"
#include "comm/store.h"

namespace ddpbench::comm {

struct GlooOptions {
  int rank = 0;
  int world_size = 1;
  // Address of this host's interface for gloo's pairs; "" resolves this host's name (multi-node).
  std::string interface_address = "127.0.0.1";
  // Per-collective timeout: a peer that stops responding fails the collective after this.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

std::unique_ptr<Communicator> make_gloo_communicator(const std::shared_ptr<Store>& store,
                                                     const GlooOptions& options);

}  // namespace ddpbench::comm
