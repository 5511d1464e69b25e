// check_limits.cpp — see check_limits.h.
#include "compare/check_limits.h"

#include <fmt/format.h>

#include <algorithm>

namespace ddpbench::compare {

ModeLimits mode_limits(const LimitSettings& s, const std::string& mode) {
  const ToleranceSettings& t = s.tolerances;
  ModeLimits l;
  l.rtol = s.float64 ? t.float64_rtol : t.float32_rtol;
  l.atol = s.float64 ? t.float64_atol : t.float32_atol;
  l.gradient = s.float64 ? t.gradient_float64 : t.gradient_float32;
  // Compression hooks round every gradient to the wire format: judge gradients at that
  // precision (8 ulps of fp16 / bf16), or the check would only measure the compression.
  // Parameters accumulate those roundings step after step: widen them the same way.
  if (mode == "ddp" && s.comm_hook != "allreduce") {
    const double wire_eps = s.comm_hook == "fp16" ? 0x1p-11 : 0x1p-8;
    l.gradient = std::max(l.gradient, 8 * wire_eps);
    l.rtol = std::max(l.rtol, 8 * wire_eps);
    l.atol = std::max(l.atol, 0.08 * wire_eps);
  }
  return l;
}

AgreementLimits zero_ddp_agreement(const LimitSettings& s) {
  AgreementLimits a;
  a.limit = std::max(mode_limits(s, "ddp").gradient, mode_limits(s, "zero").gradient);
  if (s.comm_hook != "allreduce") {
    a.apart = fmt::format("ddp's gradients travel as {} (its comm hook), zero's at full precision",
                          s.comm_hook);
  } else if (s.ddp_impl == "c10d") {
    a.apart = "ddp is PyTorch's Reducer, which averages by division in its own buckets";
  } else if (s.shard_group > 0) {
    a.apart = fmt::format(
        "HSDP sums each element over its shard group of {}, then over the replicas, between "
        "FSDP2's divisions; ddp divides first and sums over all {} ranks at once",
        s.shard_group, s.world_size);
  } else if (s.world_size != 2) {
    a.apart = s.zero_stage == 1
                  ? fmt::format(
                        "at {} ranks an allreduce adds each element's values in an order "
                        "set by its place in the bucket, and zero's buckets are not ddp's",
                        s.world_size)
                  : fmt::format(
                        "at {} ranks the reduce-scatter adds each element's values in "
                        "another order than ddp's allreduce",
                        s.world_size);
  } else if (s.zero_stage == 3 && s.clipping) {
    a.apart =
        "stage 3 clips with a norm summed from the shards' squared norms, ddp with "
        "clip_grad_norm_'s over whole gradients";
  }
  a.bitwise = a.apart.empty();
  return a;
}

}  // namespace ddpbench::compare
