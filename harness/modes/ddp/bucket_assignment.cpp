// bucket_assignment.cpp — see bucket_assignment.h.
#include "modes/ddp/bucket_assignment.h"

#include <fmt/format.h>
#include <torch/version.h>

#include <algorithm>
#include <numeric>

#include "errors.h"

namespace ddpbench::modes::ddp {

int64_t first_bucket_limit(const BucketLimits& limits) {
#if TORCH_VERSION_MAJOR >= 2
  if (limits.cap_given) return limits.bucket_cap_bytes;  // bucket_bytes_cap_default is False
#endif
  return limits.first_bucket_bytes;
}

std::vector<std::vector<int64_t>> bucket_by_size(const std::vector<int64_t>& order,
                                                 const std::vector<int64_t>& param_bytes,
                                                 const std::vector<int64_t>& limits) {
  std::vector<std::vector<int64_t>> buckets;
  std::vector<int64_t> current;
  int64_t current_bytes = 0;
  size_t limit = 0;
  for (int64_t i : order) {
    current.push_back(i);
    current_bytes += param_bytes[static_cast<size_t>(i)];
    if (current_bytes >= limits[limit]) {
      buckets.push_back(std::move(current));
      current.clear();
      current_bytes = 0;
      limit = std::min(limit + 1, limits.size() - 1);
    }
  }
  if (!current.empty()) buckets.push_back(std::move(current));
  return buckets;
}

std::vector<std::vector<int64_t>> initial_buckets(const std::vector<int64_t>& param_bytes,
                                                  const BucketLimits& limits,
                                                  bool find_unused_parameters) {
  std::vector<int64_t> order(param_bytes.size());
  std::iota(order.begin(), order.end(), 0);
  if (!find_unused_parameters) return {order};
  // Walked in registration order, so the buckets are already sorted by their smallest index, as
  // c10d sorts them; DDP reverses the list.
  std::vector<std::vector<int64_t>> buckets =
      bucket_by_size(order, param_bytes, {first_bucket_limit(limits), limits.bucket_cap_bytes});
  std::reverse(buckets.begin(), buckets.end());
  return buckets;
}

std::vector<std::vector<int64_t>> rebuilt_buckets(const std::vector<int64_t>& ready_order,
                                                  const std::vector<int64_t>& param_bytes,
                                                  const BucketLimits& limits) {
  return bucket_by_size(ready_order, param_bytes,
                        {first_bucket_limit(limits), limits.bucket_cap_bytes});
}

void check_bucket_layout(const std::vector<std::vector<int64_t>>& buckets, int64_t params,
                         const std::string& source) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(params, 0)), false);
  int64_t count = 0;
  for (const std::vector<int64_t>& bucket : buckets) {
    if (bucket.empty()) {
      throw InputError(fmt::format(
          "{}: the checkpoint's DDP buckets hold an empty bucket; pass a checkpoint ddpbench wrote",
          source));
    }
    for (const int64_t i : bucket) {
      if (i < 0 || i >= params || seen[static_cast<size_t>(i)]) {
        throw InputError(fmt::format(
            "{}: the checkpoint's DDP buckets name parameter {} {}, and this run's model reduces "
            "{} parameters, each once; pass a checkpoint of this run's scenario and model",
            source, i, i < 0 || i >= params ? "out of range" : "twice", params));
      }
      seen[static_cast<size_t>(i)] = true;
      ++count;
    }
  }
  if (count != params) {
    throw InputError(fmt::format(
        "{}: the checkpoint's DDP buckets hold {} of this run's {} reduced parameters; pass a "
        "checkpoint of this run's scenario and model",
        source, count, params));
  }
}

}  // namespace ddpbench::modes::ddp
