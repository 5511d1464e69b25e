// mpi_communicator.h — Communicator over OpenMPI, the backend used when ddpbench runs under
// mpirun (or another PMI/PMIx launcher): rank and world size come from MPI_COMM_WORLD, so no
// comm::Store rendezvous is needed. Callers need no MPI headers.
#pragma once

#include <memory>

#include "comm/communicator.h"

namespace ddpbench::comm {

// True when an MPI launcher started this process: OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE,
// PMI/PMIx launchers (e.g. srun --mpi=pmi2/pmix) set PMI_SIZE or PMIX_RANK. The environment is
// read at program start, so MPI_Init's own variables (singleton init sets PMIX_RANK) do not count.
// Children a launched process spawns inherit these variables: a local launcher must clear them.
bool mpi_launched();

// Initializes MPI at most once per process with MPI_THREAD_MULTIPLE and registers MPI_Finalize
// with std::atexit. Repeated calls (and MPI initialized by someone else) only re-check the thread
// level. MULTIPLE is required because collectives run on a communicator's own thread while other
// threads (another communicator, the launcher) may call MPI too. Throws std::runtime_error when
// less is granted or MPI was already finalized.
void ensure_mpi_initialized();

// A communicator over a duplicate of MPI_COMM_WORLD (its own context, so its traffic cannot match
// anyone else's messages). Calls ensure_mpi_initialized(). Every collective, blocking or not, runs
// in issue order on one dedicated thread, so all ranks see the same order and async allreduces
// overlap with the caller's compute. Tensors must be contiguous CPU tensors
// (std::invalid_argument otherwise); allreduce supports float32/64, float16, bfloat16 and int64.
std::unique_ptr<Communicator> make_mpi_communicator();
// The same over MPI_Comm_split(MPI_COMM_WORLD, color, world rank): the ranks with this color.
// Collective over MPI_COMM_WORLD.
std::unique_ptr<Communicator> make_mpi_communicator(int color);

}  // namespace ddpbench::comm
