// mpi_communicator.h — Communicator over OpenMPI, the backend used when ddpbench runs under
// mpirun (or another PMI/PMIx launcher): rank and world size come from MPI_COMM_WORLD, so no
// comm::Store rendezvous is needed. Callers need no MPI headers.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

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

// Note [An MPI job ends by MPI_Abort]:
// MPI_Finalize is collective: a rank that calls it waits for every other rank to call it too, and
// MPI cannot cancel a collective, nor does it time one out. A rank that failed (a crash, a
// non-finite loss, a lost peer) and returned from main as any failing command does used to wait
// in the MPI_Finalize registered at exit for a peer blocked forever in the collective it would
// never join: `mpirun` hung, whatever --timeout said. So a failing rank leaves through MPI_Abort
// (abort_mpi_job_at_exit: its message printed first, as every command prints it), which makes
// mpirun end every rank of the job, and every MPI collective has a watchdog: one that runs past
// --timeout cannot be cancelled, so the watchdog names this rank and the collective (through the
// handler the launcher gives it, which also names the peer that never came) and aborts the job.

// Ends every process of the MPI job now, with `exit_code` as mpirun's exit code: stdio is flushed
// and MPI_Abort is called on MPI_COMM_WORLD. Where MPI is not (or no longer) initialized, the
// process alone exits with `exit_code`.
[[noreturn]] void abort_mpi_job(int exit_code);

// Makes this process's exit end the MPI job through abort_mpi_job(exit_code) instead of the
// MPI_Finalize registered by ensure_mpi_initialized (Note [An MPI job ends by MPI_Abort]). For a
// rank that failed: it prints its message and returns its exit code as any failing command does.
void abort_mpi_job_at_exit(int exit_code);

// What a rank does when one of its MPI calls has run longer than MpiOptions::timeout: `call` is
// the MPI call ("MPI_Allreduce"), `waited` how long it has run. It runs on the watchdog's thread
// while the call still blocks the communication thread; it should end the job (abort_mpi_job)
// and never return. If it does return, the default ends the job.
using MpiStallHandler =
    std::function<void(const std::string& call, std::chrono::milliseconds waited)>;

struct MpiOptions {
  // < 0: a duplicate of MPI_COMM_WORLD; otherwise MPI_Comm_split(MPI_COMM_WORLD, color, world
  // rank): the ranks with this color. Collective over MPI_COMM_WORLD either way.
  int color = -1;
  // A collective running longer than this ends the job (Note [An MPI job ends by MPI_Abort]):
  // through on_stall, or, without one, with a line on stderr naming this rank and the call and
  // abort_mpi_job(kExitWorkerFailed). Zero: no watchdog.
  std::chrono::milliseconds timeout{0};
  MpiStallHandler on_stall;
};

// A communicator over a duplicate of MPI_COMM_WORLD (its own context, so its traffic cannot match
// anyone else's messages). Calls ensure_mpi_initialized(). Every collective, blocking or not, runs
// in issue order on one dedicated thread, so all ranks see the same order and async allreduces
// overlap with the caller's compute. Tensors must be contiguous CPU tensors
// (std::invalid_argument otherwise); allreduce supports float32/64, float16, bfloat16 and int64.
std::unique_ptr<Communicator> make_mpi_communicator();
// The same over MPI_Comm_split(MPI_COMM_WORLD, color, world rank): the ranks with this color.
// Collective over MPI_COMM_WORLD.
std::unique_ptr<Communicator> make_mpi_communicator(int color);
// Either, with a watchdog over its collectives.
std::unique_ptr<Communicator> make_mpi_communicator(const MpiOptions& options);

}  // namespace ddpbench::comm
