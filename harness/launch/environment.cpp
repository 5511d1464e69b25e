// environment.cpp — see environment.h.
#include "launch/environment.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <limits>

#include "errors.h"
#include "quoted_input.h"

namespace ddpbench::launch {
namespace {

int parse_int(const EnvLookup& env, const std::string& name, int min_value,
              int max_value = std::numeric_limits<int>::max()) {
  const auto v = env(name);
  if (!v) throw InputError(fmt::format("environment variable {} is missing", name));
  try {
    size_t used = 0;
    const int x = std::stoi(*v, &used);
    if (used == v->size() && x >= min_value && x <= max_value) return x;
  } catch (const std::exception&) {
  }
  if (max_value == std::numeric_limits<int>::max()) {
    throw InputError(fmt::format("environment variable {}={} is not an integer >= {}", name,
                                 quoted_input(*v), min_value));
  }
  throw InputError(fmt::format("environment variable {}={} is not an integer from {} to {}", name,
                               quoted_input(*v), min_value, max_value));
}

// A TCP port: 99999 would wrap to 34463 in the uint16 the store takes, and listen there while
// every message named 99999.
int parse_port(const EnvLookup& env) { return parse_int(env, "MASTER_PORT", 1, 65535); }

void check_rank(const WorldInfo& w, const char* rank_var) {
  if (w.rank >= w.world_size) {
    throw InputError(
        fmt::format("{}={} is outside a world of {} ranks", rank_var, w.rank, w.world_size));
  }
}

// Slurm jobs rarely export MASTER_PORT: derive a stable one from the job id, as common
// Slurm recipes do, so every task of the job agrees without talking first.
int slurm_port(const EnvLookup& env) {
  if (env("MASTER_PORT")) return parse_port(env);
  const auto job = env("SLURM_JOB_ID");
  const long id = job ? std::strtol(job->c_str(), nullptr, 10) : 0;
  return 20000 + static_cast<int>(id % 20000);
}

}  // namespace

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

const char* launcher_name(Launcher l) {
  switch (l) {
    case Launcher::kDdpbench:
      return "ddpbench";
    case Launcher::kTorchrun:
      return "torchrun";
    case Launcher::kSlurm:
      return "slurm";
    case Launcher::kOpenMpi:
      return "openmpi";
  }
  return "?";
}

std::string first_slurm_host(const std::string& nodelist) {
  // Grammar: host[,host...] where host = prefix[range,range]suffix and range = a or a-b.
  std::string first;
  size_t i = 0;
  while (i < nodelist.size() && nodelist[i] != ',' && nodelist[i] != '[') first += nodelist[i++];
  if (i < nodelist.size() && nodelist[i] == '[') {
    ++i;
    std::string lo;
    while (i < nodelist.size() && nodelist[i] != '-' && nodelist[i] != ',' && nodelist[i] != ']') {
      lo += nodelist[i++];
    }
    first += lo;
    const size_t close = nodelist.find(']', i);
    if (close != std::string::npos) {
      for (size_t j = close + 1; j < nodelist.size() && nodelist[j] != ','; ++j)
        first += nodelist[j];
    }
  }
  if (first.empty()) throw InputError(fmt::format("SLURM_NODELIST='{}' names no host", nodelist));
  return first;
}

std::optional<WorldInfo> detect_world(const EnvLookup& env) {
  WorldInfo w;
  if (env("RANK") || env("WORLD_SIZE")) {
    w.launcher = env(kSpawnedEnv) ? Launcher::kDdpbench : Launcher::kTorchrun;
    w.rank = parse_int(env, "RANK", 0);
    w.world_size = parse_int(env, "WORLD_SIZE", 1);
    w.local_rank = env("LOCAL_RANK") ? parse_int(env, "LOCAL_RANK", 0) : w.rank;
    const auto addr = env("MASTER_ADDR");
    if (!addr) throw InputError("RANK/WORLD_SIZE are set but MASTER_ADDR is missing");
    w.master_addr = *addr;
    if (w.launcher == Launcher::kDdpbench && env(kStoreFileEnv)) {
      w.store_file = *env(kStoreFileEnv);
    } else {
      w.master_port = parse_port(env);
    }
    if (w.launcher == Launcher::kTorchrun && env("TORCHELASTIC_USE_AGENT_STORE") == "True") {
      const int attempt =
          env("TORCHELASTIC_RESTART_COUNT") ? parse_int(env, "TORCHELASTIC_RESTART_COUNT", 0) : 0;
      w.agent_store_prefix = fmt::format("/worker/attempt_{}", attempt);
    }
    if (w.launcher == Launcher::kDdpbench && env(kShmPrefixEnv)) w.shm_prefix = *env(kShmPrefixEnv);
    if (w.launcher == Launcher::kDdpbench && env(kRankModeEnv)) w.rank_mode = *env(kRankModeEnv);
    if (w.launcher == Launcher::kDdpbench && env(kFlightFileEnv)) {
      w.flight_file = *env(kFlightFileEnv);
    }
    check_rank(w, "RANK");
    return w;
  }
  if (env("OMPI_COMM_WORLD_RANK")) {
    w.launcher = Launcher::kOpenMpi;
    w.rank = parse_int(env, "OMPI_COMM_WORLD_RANK", 0);
    w.world_size = parse_int(env, "OMPI_COMM_WORLD_SIZE", 1);
    w.local_rank = env("OMPI_COMM_WORLD_LOCAL_RANK")
                       ? parse_int(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0)
                       : w.rank;
    if (const auto addr = env("MASTER_ADDR")) {
      w.master_addr = *addr;
      w.master_port = env("MASTER_PORT") ? parse_port(env) : 0;
    }
    check_rank(w, "OMPI_COMM_WORLD_RANK");
    return w;
  }
  if (env("SLURM_PROCID") && env("SLURM_NTASKS")) {
    w.launcher = Launcher::kSlurm;
    w.rank = parse_int(env, "SLURM_PROCID", 0);
    w.world_size = parse_int(env, "SLURM_NTASKS", 1);
    w.local_rank = env("SLURM_LOCALID") ? parse_int(env, "SLURM_LOCALID", 0) : 0;
    if (const auto addr = env("MASTER_ADDR")) {
      w.master_addr = *addr;
    } else {
      const auto nodes = env("SLURM_NODELIST") ? env("SLURM_NODELIST") : env("SLURM_JOB_NODELIST");
      if (!nodes) throw InputError("SLURM_PROCID is set but SLURM_NODELIST is missing");
      w.master_addr = first_slurm_host(*nodes);
    }
    w.master_port = slurm_port(env);
    check_rank(w, "SLURM_PROCID");
    return w;
  }
  return std::nullopt;
}

}  // namespace ddpbench::launch
