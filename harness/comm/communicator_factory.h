// communicator_factory.h — picks the Communicator implementation for --backend.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "comm/backend_support.h"
#include "comm/communicator.h"
#include "comm/store.h"

namespace ddpbench::comm {

struct CommunicatorRequest {
  Backend backend = default_backend();
  int rank = 0;
  int world_size = 1;
  std::shared_ptr<Store> store;  // rendezvous for gloo and nccl (mpi needs none)
  std::string interface_address = "127.0.0.1";
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  int cuda_device = -1;    // nccl: the rank's device; -1 = the thread's current device
  std::string shm_prefix;  // shm: the run's segment-name prefix (ShmOptions::segment_prefix)
  int mpi_color = -1;      // mpi: >= 0 splits MPI_COMM_WORLD by it (comm/communicator_split.h)
  // mpi: what the rank does when a collective runs past `timeout` (MpiOptions::on_stall,
  // Note [An MPI job ends by MPI_Abort]); none: a line naming the rank and the call, and the job
  // is aborted.
  std::function<void(const std::string& call, std::chrono::milliseconds waited)> mpi_on_stall;
};

// Throws InputError for a backend this process cannot run (backend_support.h;
// nccl without a CUDA device refuses in make_nccl_communicator), with the fix.
std::unique_ptr<Communicator> make_communicator(const CommunicatorRequest& request);

}  // namespace ddpbench::comm
