// bucket_assignment.h — which gradients share an allreduce, as PyTorch DDP decides it
// (compute_bucket_assignment_by_size): walk parameters in REVERSE registration order (roughly
// the order backward produces their gradients), close a bucket once it reaches its byte limit;
// the first bucket's limit is small (1 MiB) so communication starts early, the rest use the cap.
#pragma once

#include <cstdint>
#include <vector>

namespace ddpbench::modes::ddp {

struct BucketLimits {
  int64_t first_bucket_bytes = 1 << 20;                // PyTorch's _DEFAULT_FIRST_BUCKET_BYTES
  int64_t bucket_cap_bytes = 25 * (int64_t{1} << 20);  // bucket_cap_mb=25
};

// param_bytes[i] = size of parameter i (registration order). Returns buckets of parameter
// indices; bucket 0 is launched first and holds the last-registered parameters.
std::vector<std::vector<int64_t>> assign_buckets(const std::vector<int64_t>& param_bytes,
                                                 const BucketLimits& limits);

}  // namespace ddpbench::modes::ddp
