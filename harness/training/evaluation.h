// evaluation.h — the evaluation pass that ends a classifier scenario's check phase: the trained
// model, in eval mode and without autograd, on a held-out set (ScenarioSpec::build_eval_dataset),
// as each mode evaluates. single: the whole set in order; dp: each batch scattered over the
// replicas and gathered (GradientPath::eval_forward); ddp: each rank evaluates its
// DistributedSampler(shuffle=False, drop_last=False) share and one allreduce sums [correct, loss,
// count] with and without the padding duplicates (float64 sums). The check "evaluation" compares
// a data-parallel mode's figures with a single-device evaluation of the SAME trained weights (a
// fresh model loaded with the mode's final state), so the only difference left is the
// distributed evaluation itself: counts and correct predictions must be equal, mean losses equal
// up to summation order.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "data/dataset.h"
#include "modes/common/fault_injection.h"
#include "modes/common/gradient_path.h"
#include "reports/run/run_record.h"
#include "runtime/execution_context.h"
#include "scenarios/scenario.h"
#include "training/run_setup.h"

namespace ddpbench::training {

// Per-sample results, in the order the samples were evaluated.
struct EvalSamples {
  std::vector<double> loss;      // cross-entropy of each sample (float64)
  std::vector<uint8_t> correct;  // argmax of the output == target
};

// Float64 sums: a count of correct predictions stays exact far beyond any evaluation set.
struct EvalTally {
  double correct = 0;
  double loss = 0;
  int64_t count = 0;

  void add(double sample_loss, bool sample_correct);
  double accuracy() const { return count > 0 ? correct / static_cast<double>(count) : 0.0; }
  double mean_loss() const { return count > 0 ? loss / static_cast<double>(count) : 0.0; }
};

// What an evaluation reduced: every evaluated sample (padding duplicates included) and only the
// distinct ones.
struct EvalTotals {
  EvalTally all;
  EvalTally unique;
};

// One rank's tallies over its share: `samples` are the results of its indices in order,
// `padding[j]` whether its j-th index is a padding duplicate. `drop_last_sample` is the `eval`
// fault: the rank leaves its last sample out of both tallies.
EvalTotals tally_share(const EvalSamples& samples, const std::vector<bool>& padding,
                       bool drop_last_sample = false);

// The allreduce's payload, [correct, loss, count] for all then unique (float64), and back.
at::Tensor totals_to_payload(const EvalTotals& totals);
EvalTotals totals_from_payload(const at::Tensor& payload);

// What K ranks' DistributedSampler(shuffle=False, drop_last=False) shares must sum to, from a
// single-device evaluation of the whole set in order: `unique` over the set, `all` over the
// sampler's padded epoch order (1 rank, or DP, has no padding).
EvalTotals expected_totals(const EvalSamples& whole_set, int64_t ranks);

// The check "evaluation": counts and correct predictions equal, mean losses within `tolerance`
// (|a - b| <= atol + rtol |ref|), with and without padding. `expected_reason` non-empty: a
// difference is an expected divergence with that reason (DDP ranks evaluating with their own
// BatchNorm statistics under --no-broadcast-buffers).
reports::CheckRecord evaluation_check(const EvalTotals& mode, const EvalTotals& reference,
                                      const scenarios::Tolerance& tolerance,
                                      const std::string& expected_reason);

// The report's record of a mode's evaluation (status "done").
reports::EvaluationRecord evaluation_record(const EvalTotals& totals, const std::string& dataset);
reports::EvaluationRecord skipped_evaluation(const std::string& reason);

// The run's held-out set: the scenario's, cut to setup.eval_size; nullopt with `why` set when the
// pass does not run (regression scenario, no held-out split, --eval-size 0, no check phase).
std::shared_ptr<const data::Dataset> evaluation_set(const RunSetup& setup, std::string& why);

// The evaluation pass of a local mode (single, dp) over `path` after its check phase: its
// record, and for dp the check against single-device evaluation of the master's weights.
void evaluate_local_mode(const RunSetup& setup, const runtime::ExecutionContext& context,
                         modes::GradientPath& path, bool data_parallel,
                         reports::EvaluationRecord& record,
                         std::vector<reports::CheckRecord>& checks);

// The evaluation pass of one DDP rank (collective: every rank calls it). Rank 0 gets the record
// and the check (against single-device evaluation of its weights, which every rank holds after
// the buffer broadcast of the first evaluation forward); other ranks' outputs stay empty.
void evaluate_ddp_rank(const RunSetup& setup, const runtime::ExecutionContext& context,
                       modes::GradientPath& path, comm::Communicator& comm,
                       reports::EvaluationRecord& record,
                       std::vector<reports::CheckRecord>& checks);

}  // namespace ddpbench::training
