// process_role.cpp — see process_role.h.
#include "run/process_role.h"

#include <cstdlib>

#include "launch/environment.h"

namespace ddpbench::run {

bool is_spawned_worker() { return std::getenv(launch::kSpawnedEnv) != nullptr; }

}  // namespace ddpbench::run
