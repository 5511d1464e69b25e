// comparison_policy.cpp — see comparison_policy.h.
#include "training/comparison_policy.h"

#include <fmt/format.h>

#include "compare/check_limits.h"
#include "modes/ddp/comm_hook.h"
#include "modes/ddp/distributed_model.h"

namespace ddpbench::training {

compare::LimitSettings limit_settings(const RunSetup& setup) {
  const scenarios::Tolerances& t = setup.spec->tolerances;
  compare::LimitSettings s;
  s.tolerances = {t.float32.rtol, t.float32.atol,  t.float64.rtol,
                  t.float64.atol, t.gradient_float32, t.gradient_float64};
  s.float64 = setup.context.dtype == at::kDouble;
  s.comm_hook = modes::ddp::comm_hook_name(setup.ddp.reducer.comm_hook);
  s.ddp_impl = modes::ddp::ddp_impl_name(setup.ddp.impl);
  s.world_size = setup.world_size;
  s.zero_stage = setup.zero_stage;
  s.shard_group = setup.shard_group;
  s.clipping = setup.spec->clip_grad_norm.has_value();
  return s;
}

compare::ComparisonPolicy comparison_policy(const RunSetup& setup, modes::ModeKind mode,
                                            const std::string& grad_record) {
  const compare::ModeLimits limits =
      compare::mode_limits(limit_settings(setup), modes::mode_name(mode));
  compare::ComparisonPolicy p;
  p.state = {limits.rtol, limits.atol};
  p.gradient_tolerance = limits.gradient;
  p.gradient_fingerprints = grad_record == "fingerprint";
  for (const auto& d : setup.spec->divergences) {
    if (d.only_without_sync_bn && setup.sync_bn) continue;
    if (d.mode == modes::mode_name(mode)) p.divergences.push_back({d.tensor_pattern, d.reason});
  }
  return p;
}

compare::AgreementRule ddp_agreement_rule(const RunSetup& setup, const std::string& grad_record) {
  const compare::AgreementLimits limits = compare::zero_ddp_agreement(limit_settings(setup));
  compare::AgreementRule rule;
  rule.gradient_fingerprints = grad_record == "fingerprint";
  rule.limit = limits.limit;
  rule.bitwise = limits.bitwise;
  rule.why = rule.bitwise
                 ? "bit for bit: at 2 ranks every reduction adds two values, which no order or "
                   "bucket layout changes, and the sharded step, broadcasts and gathers compute "
                   "what ddp's step does"
                 : fmt::format("normalized error <= {:g}, not bit for bit: {}", rule.limit,
                               limits.apart);
  return rule;
}

}  // namespace ddpbench::training
