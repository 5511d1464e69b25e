// shm_names.h — the names of a run's shared-memory segments (comm/shm_communicator.h), chosen so
// that whoever knows the run's prefix can remove every one of them: the launching parent, whatever
// ended the run, and a later run once the owner is dead (launch/stale_reclaim.h,
// Note [Reclaiming what a killed run left]).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace ddpbench::comm {

// Every segment ddpbench creates is /dev/shm/<kShmNamePrefix><owner pid>-<random>-g<G>-r<R>.
inline constexpr const char* kShmNamePrefix = "ddpbench-shm-";
// The /dev/shm folder the POSIX shm names live in (glibc's shm_open).
inline constexpr const char* kShmDir = "/dev/shm";

// A fresh run prefix "ddpbench-shm-<owner>-<random>": `owner` is the process whose death makes
// the segments stale (the launching parent, or rank 0 when another launcher started the ranks).
std::string new_shm_run_prefix(pid_t owner);
// The shm_open name ("/...") of rank `rank`'s segment of the run's `generation`-th communicator.
std::string shm_segment_name(const std::string& run_prefix, int64_t generation, int rank);
// The owner pid a /dev/shm entry's name carries; -1 when it is not a ddpbench segment name.
pid_t shm_segment_owner(const std::string& entry_name);
// Unlinks every segment of the run (those that exist); returns how many it removed.
int remove_shm_segments(const std::string& run_prefix);

}  // namespace ddpbench::comm
