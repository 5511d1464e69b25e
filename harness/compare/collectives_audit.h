// collectives_audit.h — a report's HSDP mesh and collective counts against each other: the shard
// group config.shard_group records must be one `run` accepts for the world each zero result ran
// at, and rank 0's gradient reduction per checked step (results[].collectives, Note [Collective
// accounting] in training/collective_accounting.h) must be what that configuration issues, or the
// collectives check must name rank 0 at that step. A skipped replica all-reduce (the `replica`
// fault: 2 all-reduces become 1) or an HSDP run recorded as plain zero is thereby refused, not
// rendered. What cannot be recomputed: the other ranks' counts (the report keeps rank 0's), and a
// stage 1 run's bucket count, so stage 1 is held to the counts' form only.
#pragma once

#include <cstddef>

#include "reports/run/run_record.h"

namespace ddpbench::compare {

// Throws InputError, one line naming the field, when config.shard_group is not one `run` records
// (0, or 2 <= S < K with S dividing every zero result's K, at stage 2 or 3).
void audit_shard_group(const reports::RunReport& report);

// Throws InputError naming the field when result `i`'s stored counts and its collectives check
// contradict each other under the report's configuration.
void audit_collectives(const reports::RunReport& report, size_t i);

}  // namespace ddpbench::compare
