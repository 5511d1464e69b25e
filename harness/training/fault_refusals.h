// fault_refusals.h — whether `--inject-fault` fits the run it is given to, decided before training
// from the fault's row (modes/common/fault_table.h): a fault that goes into no mode of the run, or
// needs an option the run lacks, or sits at a rank or step the run does not have, would prove
// nothing, so it is refused (InputError: one line naming the problem and the fix).
#pragma once

#include "training/run_setup.h"

namespace ddpbench::training {

// Throws InputError when `setup.fault` (set) cannot go into this run as asked; then, for a grad
// fault, require_detectable_fault (training/fault_detection.h).
void check_fault(const RunSetup& setup);

}  // namespace ddpbench::training
