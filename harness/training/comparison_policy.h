// comparison_policy.h — the tolerances and declared divergences a mode is judged with: the
// scenario's per-dtype tolerances (Note [Tolerance model] in docs/ARCHITECTURE.md), widened to the
// wire precision of a DDP compression hook, and the scenario's remaining expected divergences.
#pragma once

#include <string>

#include "compare/check_limits.h"
#include "compare/ddp_agreement.h"
#include "compare/mode_comparison.h"
#include "modes/common/mode_kind.h"
#include "training/run_setup.h"

namespace ddpbench::training {

// What the run's limits depend on (compare/check_limits.h), as its report's config records it.
compare::LimitSettings limit_settings(const RunSetup& setup);

// grad_record: "full" or "fingerprint".
compare::ComparisonPolicy comparison_policy(const RunSetup& setup, modes::ModeKind mode,
                                            const std::string& grad_record);

// The zero mode against ddp in the same run (compare/ddp_agreement.h), the tolerance model of
// issue 35: bit for bit where sharding changes no arithmetic (2 ranks: every reduction adds two
// values, in any order and bucket layout the same; ddpbench's own DDP engines, without a
// compression hook; not stage 3 with clipping, whose norm is summed from the shards'); otherwise
// the larger of the two modes' gradient tolerances, and the detail says what changes the sums.
compare::AgreementRule ddp_agreement_rule(const RunSetup& setup, const std::string& grad_record);

}  // namespace ddpbench::training
