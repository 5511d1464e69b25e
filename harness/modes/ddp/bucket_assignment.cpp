// bucket_assignment.cpp — see bucket_assignment.h.
#include "modes/ddp/bucket_assignment.h"

namespace ddpbench::modes::ddp {

std::vector<std::vector<int64_t>> assign_buckets(const std::vector<int64_t>& param_bytes,
                                                 const BucketLimits& limits) {
  std::vector<std::vector<int64_t>> buckets;
  std::vector<int64_t> current;
  int64_t current_bytes = 0;
  int64_t limit = limits.first_bucket_bytes;
  for (auto i = static_cast<int64_t>(param_bytes.size()) - 1; i >= 0; --i) {
    current.push_back(i);
    current_bytes += param_bytes[static_cast<size_t>(i)];
    if (current_bytes >= limit) {
      buckets.push_back(std::move(current));
      current.clear();
      current_bytes = 0;
      limit = limits.bucket_cap_bytes;
    }
  }
  if (!current.empty()) buckets.push_back(std::move(current));
  return buckets;
}

}  // namespace ddpbench::modes::ddp
