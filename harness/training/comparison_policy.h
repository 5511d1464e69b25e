// comparison_policy.h — the tolerances and declared divergences a mode is judged with: the
// scenario's per-dtype tolerances (docs/ARCHITECTURE.md, contract 6), widened to the wire
// precision of a DDP compression hook, and the scenario's remaining expected divergences.
#pragma once

#include <string>

#include "compare/mode_comparison.h"
#include "modes/common/mode_kind.h"
#include "training/run_setup.h"

namespace ddpbench::training {

// grad_record: "full" or "fingerprint".
compare::ComparisonPolicy comparison_policy(const RunSetup& setup, modes::ModeKind mode,
                                            const std::string& grad_record);

}  // namespace ddpbench::training
