// collective_accounting.h — what each checked step of a per-rank mode put on the wire, by kind and
// bytes, and the `collectives` check that holds a mode's gradient reduction to the collectives it
// must issue.
//
// Note [Collective accounting]:
// The recording communicator counts every collective it passes to the backend, with its bytes,
// over the world and every group split off it (comm/collective_counts.h). The accounting reads
// those counts at each step phase the step loop announces and gives the difference to the phase
// that just ended: a step's reduction is what was issued in its backward and gradient-reduction
// phases, over every micro-step (DDP's buckets start during backward), and the step's total is
// everything from its data phase to the next step's (the checked step's own loss all-reduce,
// digests and recorded gradients included). A mode that knows what its reduction must issue per
// synchronising micro-step (ReductionRule) is judged on every rank and every checked step: the
// all-reduces and reduce-scatters counted against the rule times the micro-steps that
// synchronise (one under no_sync, A without), or per step where that changes from step to step
// (ddp: one all-reduce per bucket each reduction used, and DDP rebuilds its buckets after the
// first step), so a collective skipped or issued twice FAILs even where the numbers happen to
// agree (pytorch's FSDP2 tests count all-reduces against reduce-scatters under accumulation for
// the same reason). All-gathers and broadcasts are recorded, not judged: SyncBN and the checked
// steps' records issue them in those phases too.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "comm/collective_counts.h"
#include "comm/communicator.h"
#include "modes/common/step_loop.h"
#include "reports/run/run_record.h"

namespace ddpbench::training {

// One checked step as this rank's communicator saw it.
struct StepCollectives {
  int64_t step = 0;
  int64_t micro_steps = 0;           // forwards the step ran
  comm::CollectiveCounts reduction;  // issued in its backward and reduction phases
  comm::CollectiveCounts total;      // issued from its data phase to the next step's
};

class CollectiveAccounting {
 public:
  explicit CollectiveAccounting(const comm::Communicator& comm) : comm_(comm) {}

  // `next` with this accounting reading the counts at every phase first.
  std::function<void(int64_t, modes::StepPhase)> observe(
      std::function<void(int64_t, modes::StepPhase)> next);
  // After training: what was issued after the last step's last phase is that step's; the steps.
  std::vector<StepCollectives> finish();

 private:
  void close_phase();

  const comm::Communicator& comm_;
  comm::CollectiveCounts last_;
  int64_t step_ = -1;
  modes::StepPhase phase_ = modes::StepPhase::kData;
  std::vector<StepCollectives> steps_;
};

// What a mode's gradient reduction issues in one synchronising micro-step, by kind (-1: that kind
// is not judged), and in words for the check's detail ("zero stage 2 (HSDP): 1 reduce-scatter in
// the shard group, ...").
struct ReductionRule {
  int64_t allreduce = -1;
  int64_t reduce_scatter = -1;
  // Issued once per optimizer step besides (--amp fp16's overflow agreement at stages 2 and 3).
  int64_t allreduce_per_step = 0;
  int64_t synchronising_micro_steps = 1;  // 1 under no_sync, else the accumulation steps
  // Per step, the all-reduces of its whole reduction where they differ from step to step (DDP's
  // buckets before and after their rebuild); a step listed here is judged by it instead of
  // `allreduce`.
  std::map<int64_t, int64_t> allreduce_by_step;
  std::string what;
};

// Collective over `comm` (one all-gather): every rank's reduction counts against `rule`.
reports::CheckRecord collective_count_check(comm::Communicator& comm,
                                            const std::vector<StepCollectives>& mine,
                                            const ReductionRule& rule);

// The report's records of `steps`.
std::vector<reports::StepCollectivesRecord> collective_records(
    const std::vector<StepCollectives>& steps);

}  // namespace ddpbench::training
