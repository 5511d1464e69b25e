// environment.h — who am I in the world? Detects a worker launched by ddpbench itself, torchrun
// (RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT), Slurm's srun (SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID, first host of SLURM_NODELIST) or OpenMPI's mpirun
// (OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK). No such variables: this process is the launcher.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace ddpbench::launch {

// Reads one environment variable (injectable so tests need not touch the real environment).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_env();

enum class Launcher { kDdpbench, kTorchrun, kSlurm, kOpenMpi };
const char* launcher_name(Launcher l);

struct WorldInfo {
  Launcher launcher = Launcher::kDdpbench;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;  // "" under OpenMPI without MASTER_ADDR: rank 0 shares it through MPI
  int master_port = 0;      // 0 likewise
  // Workers a ddpbench parent spawned rendezvous through a file store in the parent's private
  // (0700) temporary folder instead of a TCP store: nothing listens on the network for them.
  std::string store_file;
  // The prefix of the run's shared-memory segment names (comm/shm_names.h), chosen by the ddpbench
  // parent so that it can remove them however the run ends; "" under other launchers.
  std::string shm_prefix;
  // The one per-rank mode ("ddp", "zero") a ddpbench parent spawned this worker group for; ""
  // under other launchers, whose ranks run every per-rank mode of --modes in turn.
  std::string rank_mode;
  // Where a spawned rank keeps its flight recorder (Note [The flight recorder]), so that the
  // parent can read it however the rank ends; "" under other launchers (the ring stays in memory).
  std::string flight_file;
  // Under torchrun when its agent already serves the store at MASTER_ADDR:MASTER_PORT
  // (TORCHELASTIC_USE_AGENT_STORE=True: static rendezvous, and c10d's from PyTorch 2.4 on): the
  // prefix PyTorch's own workers use in it, "/worker/attempt_<TORCHELASTIC_RESTART_COUNT>". Every
  // rank then connects to that store, rank 0 included, as torch.distributed's _create_c10d_store
  // does; "" when rank 0 serves the store itself.
  std::string agent_store_prefix;
};

// Environment variable set on workers spawned by ddpbench (the parent hosts the store and
// writes the report).
inline constexpr const char* kSpawnedEnv = "DDPBENCH_SPAWNED";
// The file store of spawned workers (WorldInfo::store_file).
inline constexpr const char* kStoreFileEnv = "DDPBENCH_STORE_FILE";
// Where a spawned rank 0 writes its result bytes (launch/worker_group.h, send_result).
inline constexpr const char* kResultFileEnv = "DDPBENCH_RESULT_FILE";
// The parent's shm segment-name prefix for spawned workers (WorldInfo::shm_prefix).
inline constexpr const char* kShmPrefixEnv = "DDPBENCH_SHM_PREFIX";
// The mode a spawned worker group runs (WorldInfo::rank_mode).
inline constexpr const char* kRankModeEnv = "DDPBENCH_RANK_MODE";
// A spawned rank's flight-recorder file (WorldInfo::flight_file).
inline constexpr const char* kFlightFileEnv = "DDPBENCH_FLIGHT_FILE";

// nullopt when no launcher variables are present. Throws InputError for inconsistent variables
// (e.g. RANK without MASTER_PORT, rank outside the world), naming the variable.
std::optional<WorldInfo> detect_world(const EnvLookup& env);

// This machine's host name, as reports and failure messages name it.
std::string host_name();

// "node[01-04,07],gpu2" -> "node01": the first host of a Slurm node list.
std::string first_slurm_host(const std::string& nodelist);

}  // namespace ddpbench::launch
