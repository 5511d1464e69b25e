// mpi_rendezvous.h — under mpirun without MASTER_ADDR/MASTER_PORT, rank 0 hosts the store on a
// free port and tells every rank where through MPI_Bcast, so `mpirun -np K ddpbench run
// --backend gloo` needs no extra variables.
#pragma once

#include <chrono>
#include <memory>

#include "comm/store.h"

namespace ddpbench::comm {

std::shared_ptr<Store> mpi_rendezvous_store(int rank, std::chrono::milliseconds timeout);

}  // namespace ddpbench::comm
