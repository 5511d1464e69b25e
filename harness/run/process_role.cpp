// process_role.cpp — see process_role.h.
#include "run/process_role.h"

#include <sys/prctl.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "launch/environment.h"
#include "launch/signal_cleanup.h"
#include "runtime/host_allocator.h"

namespace ddpbench::run {

bool is_spawned_worker() { return std::getenv(launch::kSpawnedEnv) != nullptr; }

void prepare_process(const char* argv0) {
  runtime::keep_freed_host_memory();  // before any tensor exists: every step's reuse gains
  if (is_spawned_worker()) {
    // The parent starts a worker as ddpbench-rankR (argv[0]); the kernel's name is 15 bytes.
    const std::string name = std::filesystem::path(argv0 ? argv0 : "ddpbench").filename();
    prctl(PR_SET_NAME, name.substr(0, 15).c_str());
    return;  // the parent stops its workers; a worker only has to die
  }
  launch::SignalCleanup::process().install();
}

}  // namespace ddpbench::run
