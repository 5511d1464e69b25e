// mpi_rendezvous.h — under an MPI launcher without MASTER_ADDR/MASTER_PORT, rank 0 hosts the store
// on a free port and tells every rank where through MPI_Bcast, so `mpirun -np K ddpbench run
// --backend gloo` needs no extra variables. The mpi backend needs no store to meet, but its ranks
// keep their heartbeats in one (launch/peer_loss.h), so that a rank whose collective stalls can
// name the peer that died or never came.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "comm/store.h"

namespace ddpbench::comm {

struct MpiRendezvous {
  std::shared_ptr<Store> store;
  std::string host;  // where rank 0 serves it, as every rank reached it
  int port = 0;
};

// Collective over MPI_COMM_WORLD. Rank 0 broadcasts even when it cannot serve (an empty address),
// so that every rank throws std::runtime_error instead of waiting for it.
MpiRendezvous mpi_rendezvous_store(int rank, std::chrono::milliseconds timeout);

}  // namespace ddpbench::comm
