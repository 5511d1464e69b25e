// check_limits.h — the limit every check of a run is held to, from what the run's configuration
// says: the scenario's tolerances for the run's dtype, widened to a DDP compression hook's wire
// precision, and the rule zero is held to against ddp. The run judges with these limits
// (training/comparison_policy.h) and `report` and `gate` recompute them from a report's config
// (compare/report_audit.h), so a limit edited in a report is one the configuration does not give.
// No torch: the settings are the report's own words.
#pragma once

#include <cstdint>
#include <string>

namespace ddpbench::compare {

// The scenario's TOL keys (scenarios::Tolerances).
struct ToleranceSettings {
  double float32_rtol = 0, float32_atol = 0;
  double float64_rtol = 0, float64_atol = 0;
  double gradient_float32 = 0, gradient_float64 = 0;
};

// What a check's limit depends on, as a report's config records it.
struct LimitSettings {
  ToleranceSettings tolerances;
  bool float64 = false;                // the training dtype (autocast leaves it float32)
  std::string comm_hook = "allreduce";  // DDP's, as config.ddp.comm_hook names it
  std::string ddp_impl = "bucketed";    // config.ddp.impl
  int64_t world_size = 1;
  int64_t zero_stage = 0;
  int64_t shard_group = 0;  // config.shard_group (HSDP), 0 without
  bool clipping = false;  // the scenario clips gradients (OPTIM.CLIP_GRAD_NORM)
};

// The elementwise rule of the state checks (loss, parameters, buffers, evaluation: atol + rtol *
// |ref|, limit 1) and the normalized limit of the gradient-like ones (gradients, updates,
// optimizer state) for `mode` ("single", "dp", "ddp", "zero").
struct ModeLimits {
  double rtol = 0, atol = 0;
  double gradient = 0;
};
ModeLimits mode_limits(const LimitSettings& settings, const std::string& mode);

// The zero mode against ddp in the same run: bit for bit, or within `limit` for the reason
// `apart` says (training/comparison_policy.h's ddp_agreement_rule).
struct AgreementLimits {
  bool bitwise = true;
  double limit = 0;
  std::string apart;  // what makes zero's sums differ from ddp's; empty when bitwise
};
AgreementLimits zero_ddp_agreement(const LimitSettings& settings);

}  // namespace ddpbench::compare
