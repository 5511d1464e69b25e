// report_audit.h — what a report's configuration implies about its results, checked by `report`
// and `gate` on every report they read (and by `run` on its own before writing it): the verdict
// function (reports/run/verdict.h) recomputes each status from a check's numbers, and this recomputes
// what those numbers must be held to.
//
// Note [What a report's configuration implies]
// - Every check's limit is the one its configuration gives (compare/check_limits.h): the
//   scenario's tolerances for the run's dtype as config.scenario_yaml records them, widened by a
//   DDP compression hook, and zero's rule against ddp. A limit or tolerance edited wider, or a
//   dtype edited to float64 beside float32 limits, is refused.
// - A mode judged against a reference carries every check its configuration produces: the loss
//   and the gradients, the updates (lockstep) or the final parameters (free-running), the ranks'
//   agreement (ddp, zero), the GradScaler's scale (--amp fp16), the evaluation pass (dp, ddp) and
//   zero's agreement with ddp when both ran. A check deleted from a failing mode is missing here.
// - Each result is a mode config.modes names, once; --amp runs record what autocast changed and
//   runs without it record nothing; a zero result's memory rows show the sharding its stage does
//   (stage 3 holds a shard of ddp's parameters, stages 1 and 2 all of them; stage 2 a shard of its
//   gradients).
// - The loss check is recomputed from the per-step losses the mode and its reference recorded.
// - Every timing figure the stored step samples determine is recomputed from them
//   (compare/throughput_spread.h's derive_figures): the repeats' medians, the median step, its
//   interval, the spread, samples/s and per device, the percentiles, mean and CV, the weak reasons
//   (Note [Weak figures]), the bus bandwidth (from ddp's bytes_per_step), the straggler, and a
//   per-rank mode's comm_wait_s phase from its ranks' waits; each point's scaling efficiency
//   against the single-device baseline's samples/s; config.repeats against each timed point's
//   repeats.
// - config.shard_group is one a run records (2 <= S < K, S dividing K, zero at stage 2 or 3), and
//   rank 0's collectives per checked step are what that mesh issues or the collectives check names
//   rank 0 at that step (compare/collectives_audit.h).
// What it cannot prove: a report whose numbers were all forged consistently (the losses, each
// check's counts and errors, the configuration beside them) is indistinguishable from a real
// one; docs/checks.md, "What a report can and cannot prove", says so and what to do.
#pragma once

#include "reports/run/run_record.h"

namespace ddpbench::compare {

// Throws InputError, one line naming the field, what the configuration gives and "was the file
// edited?", for the first inconsistency found.
void audit_report(const reports::RunReport& report);

}  // namespace ddpbench::compare
