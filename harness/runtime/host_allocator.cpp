// host_allocator.cpp — see host_allocator.h.
#include "runtime/host_allocator.h"

#include <malloc.h>

#include <cstdlib>

namespace ddpbench::runtime {

bool keep_freed_host_memory() {
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr ||
      std::getenv("MALLOC_TRIM_THRESHOLD_") != nullptr) {
    return false;
  }
  // glibc's upper limit for the mmap threshold on 64-bit hosts: 4 MiB * sizeof(long). Blocks
  // above it (rare: one tensor of more than 32 MiB) are still mapped per allocation.
  constexpr int kMaxMmapThreshold = 32 << 20;
  // Freed memory at the top of the heap is returned only beyond this much.
  constexpr int kTrimThreshold = 1 << 30;
  return mallopt(M_MMAP_THRESHOLD, kMaxMmapThreshold) == 1 &&
         mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
}

}  // namespace ddpbench::runtime
