// comparison_policy.cpp — see comparison_policy.h.
#include "training/comparison_policy.h"

#include <fmt/format.h>

#include <algorithm>

namespace ddpbench::training {

compare::ComparisonPolicy comparison_policy(const RunSetup& setup, modes::ModeKind mode,
                                            const std::string& grad_record) {
  const scenarios::Tolerances& t = setup.spec->tolerances;
  const bool f64 = setup.context.dtype == at::kDouble;
  const scenarios::Tolerance& state = f64 ? t.float64 : t.float32;
  compare::ComparisonPolicy p;
  p.state = {state.rtol, state.atol};
  p.gradient_tolerance = f64 ? t.gradient_float64 : t.gradient_float32;
  p.gradient_fingerprints = grad_record == "fingerprint";
  // Compression hooks round every gradient to the wire format: judge gradients at that
  // precision (8 ulps of fp16 / bf16), or the check would only measure the compression.
  // Parameters accumulate those roundings step after step: widen them the same way.
  if (mode == modes::ModeKind::kDdp &&
      setup.ddp.reducer.comm_hook != modes::ddp::CommHookKind::kAllreduce) {
    const double wire_eps =
        setup.ddp.reducer.comm_hook == modes::ddp::CommHookKind::kFp16Compress ? 0x1p-11 : 0x1p-8;
    p.gradient_tolerance = std::max(p.gradient_tolerance, 8 * wire_eps);
    p.state.rtol = std::max(p.state.rtol, 8 * wire_eps);
    p.state.atol = std::max(p.state.atol, 0.08 * wire_eps);
  }
  for (const auto& d : setup.spec->divergences) {
    if (d.only_without_sync_bn && setup.sync_bn) continue;
    if (d.mode == modes::mode_name(mode)) p.divergences.push_back({d.tensor_pattern, d.reason});
  }
  return p;
}

compare::AgreementRule ddp_agreement_rule(const RunSetup& setup, const std::string& grad_record) {
  compare::AgreementRule rule;
  rule.gradient_fingerprints = grad_record == "fingerprint";
  rule.limit =
      std::max(comparison_policy(setup, modes::ModeKind::kDdp, grad_record).gradient_tolerance,
               comparison_policy(setup, modes::ModeKind::kZero, grad_record).gradient_tolerance);
  const bool clipping = setup.spec->clip_grad_norm.has_value();
  std::string apart;  // what makes zero's sums differ from ddp's, if anything
  if (setup.ddp.reducer.comm_hook != modes::ddp::CommHookKind::kAllreduce) {
    apart = fmt::format("ddp's gradients travel as {} (its comm hook), zero's at full precision",
                        modes::ddp::comm_hook_name(setup.ddp.reducer.comm_hook));
  } else if (setup.ddp.impl == modes::ddp::DdpImpl::kC10d) {
    apart = "ddp is PyTorch's Reducer, which averages by division in its own buckets";
  } else if (setup.world_size != 2) {
    apart = setup.zero_stage == 1
                ? fmt::format(
                      "at {} ranks an allreduce adds each element's values in an order "
                      "set by its place in the bucket, and zero's buckets are not ddp's",
                      setup.world_size)
                : fmt::format(
                      "at {} ranks the reduce-scatter adds each element's values in "
                      "another order than ddp's allreduce",
                      setup.world_size);
  } else if (setup.zero_stage == 3 && clipping) {
    apart =
        "stage 3 clips with a norm summed from the shards' squared norms, ddp with "
        "clip_grad_norm_'s over whole gradients";
  }
  rule.bitwise = apart.empty();
  rule.why = rule.bitwise
                 ? "bit for bit: at 2 ranks every reduction adds two values, which no order or "
                   "bucket layout changes, and the sharded step, broadcasts and gathers compute "
                   "what ddp's step does"
                 : fmt::format("normalized error <= {:g}, not bit for bit: {}", rule.limit, apart);
  return rule;
}

}  // namespace ddpbench::training
