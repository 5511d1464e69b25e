// fault_detection.h — whether an injected fault can make this run FAIL. `--inject-fault` exists
// to prove a check fails; a run that injects a fault its tolerances cannot see and then says PASS
// tells the user the harness is blind where it is not, or sighted where it is blind. A grad fault
// below the run's gradient tolerance is refused before training (Note [Detectable faults]); one
// that still slipped through every check (it depends on the gradients' sizes) fails the run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "modes/common/mode_kind.h"
#include "reports/run/run_record.h"
#include "training/run_setup.h"

namespace ddpbench::training {

// The run's grad fault is one the ddp mode's gradient check cannot see even when the ranks'
// gradients are alike: throws InputError naming the eps, the run's gradient tolerance and the
// smallest eps the run can detect. Nothing to check without a grad fault or without single (no
// reference judges ddp's gradients then).
void require_detectable_fault(const RunSetup& setup);

// After `mode` was judged (`checks`: every check of it, extra checks included): a failing
// "injected_fault" check when the run's fault went into this mode (one of its row's modes), no
// check failed, and either its row says must_be_caught (every kind but crash, hang, nan, slow
// and inf; modes/common/fault_table.h) or nothing in the run could see it (a kNeedsReference
// kind without its reference, accepted only under --trace: Note [A fault needs a judge that can
// see it]). A run a fault went into never PASSes on a fault it did not see.
std::optional<reports::CheckRecord> undetected_fault_check(
    const RunSetup& setup, modes::ModeKind mode, const std::vector<reports::CheckRecord>& checks);

}  // namespace ddpbench::training
