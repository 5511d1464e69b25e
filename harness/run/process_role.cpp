// process_role.cpp — see process_role.h.
#include "run/process_role.h"

#include <sys/prctl.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "errors.h"
#include "launch/environment.h"
#include "launch/rank_zygote.h"
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
  }
}

namespace {

// Whether a launcher's variables make this process a rank. Bad ones are the command's to refuse
// (exit 2, in one line), not this set-up's: they also mean that this process launches nothing.
bool has_launcher_variables() {
  try {
    return launch::detect_world(launch::process_env()).has_value();
  } catch (const InputError&) {
    return true;
  }
}

}  // namespace

LaunchingParent::LaunchingParent(std::unique_ptr<launch::RankZygote> zygote)
    : zygote_(std::move(zygote)) {}
LaunchingParent::LaunchingParent(LaunchingParent&&) noexcept = default;
LaunchingParent::~LaunchingParent() = default;

LaunchingParent prepare_launcher(bool spawns_ranks, int (*entry)(int, char**), int argc,
                                 char** argv) {
  if (is_spawned_worker()) return LaunchingParent(nullptr);  // the parent stops its workers
  // A bad DDPBENCH_RANK_START is refused wherever ranks could start, before anything is (exit 2).
  if (spawns_ranks) launch::rank_start_from_env();
  std::unique_ptr<launch::RankZygote> zygote;
  if (spawns_ranks && !has_launcher_variables())
    zygote = launch::RankZygote::start(entry, argc, argv);
  launch::SignalCleanup::process().install();
  if (zygote) zygote->track();
  return LaunchingParent(std::move(zygote));
}

}  // namespace ddpbench::run
