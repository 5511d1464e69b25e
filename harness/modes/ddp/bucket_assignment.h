// bucket_assignment.h — which gradients share an allreduce, as PyTorch's DDP decides it
// (torch/nn/parallel/distributed.py's _ddp_init_helper over c10d's
// compute_bucket_assignment_by_size, then Reducer::rebuild_buckets). The layout is arithmetic, not
// only speed: at three or more ranks an allreduce sums an element in an order that depends on
// where it sits in its bucket, so an engine that wants PyTorch's bits needs PyTorch's buckets.
//
// - First iteration: ONE bucket of every parameter in registration order, unless unused
//   parameters are searched (PyTorch 1.12+: registration order is not the order backward produces
//   gradients, so it does not bucket before it has seen one backward).
// - With find_unused_parameters: the size rule over registration order (a small first bucket,
//   then the cap), buckets reversed so that the last-registered parameters reduce first; never
//   rebuilt.
// - From the second iteration on (no unused-parameter search): rebuilt once over the order the
//   first synchronised backward made the gradients ready (rank 0's), the small first bucket
//   first, not reversed.
// - PyTorch 2.x only: a bucket cap given explicitly (bucket_cap_mb) drops the small first bucket.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::modes::ddp {

struct BucketLimits {
  int64_t first_bucket_bytes = 1 << 20;                // PyTorch's _DEFAULT_FIRST_BUCKET_BYTES
  int64_t bucket_cap_bytes = 25 * (int64_t{1} << 20);  // bucket_cap_mb=25
  bool cap_given = false;                              // --bucket-cap-mb was on the command line
};

// The first bucket's limit the linked libtorch's DDP uses (bucket_cap for 2.x with cap_given).
int64_t first_bucket_limit(const BucketLimits& limits);

// c10d's size rule over `order` (parameter indices): a bucket closes once its bytes reach its
// limit, limits[k] for the k-th bucket and the last limit for the rest. Buckets and their contents
// in walk order.
std::vector<std::vector<int64_t>> bucket_by_size(const std::vector<int64_t>& order,
                                                 const std::vector<int64_t>& param_bytes,
                                                 const std::vector<int64_t>& limits);

// param_bytes[i] = size of parameter i (registration order). The buckets DDP's constructor hands
// its Reducer; bucket 0 is launched first.
std::vector<std::vector<int64_t>> initial_buckets(const std::vector<int64_t>& param_bytes,
                                                  const BucketLimits& limits,
                                                  bool find_unused_parameters);

// The buckets Reducer::rebuild_buckets makes from the first iteration's gradient-ready order.
std::vector<std::vector<int64_t>> rebuilt_buckets(const std::vector<int64_t>& ready_order,
                                                  const std::vector<int64_t>& param_bytes,
                                                  const BucketLimits& limits);

// A layout read from a checkpoint (--resume) must hold each of `params` parameter indices exactly
// once, in non-empty buckets; throws InputError naming what does not fit otherwise, after
// `source` (e.g. "--resume 'ckpt.pt'").
void check_bucket_layout(const std::vector<std::vector<int64_t>>& buckets, int64_t params,
                         const std::string& source = "--resume");

}  // namespace ddpbench::modes::ddp
