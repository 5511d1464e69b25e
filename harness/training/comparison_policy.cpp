// comparison_policy.cpp — see comparison_policy.h.
#include "training/comparison_policy.h"

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

}  // namespace ddpbench::training
