// training_outcome_codec_test.cpp — DDP rank 0's outcome survives the trip to the parent: every
// field (the codec walks one field list), including parameters without gradients and the lockstep
// comparison's per-step differences.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "compare/mode_comparison.h"
#include "training/outcome_codec.h"

namespace ddpbench::run {
namespace {

using training::ModeOutcome;

// An outcome with every field set, none to its default.
ModeOutcome outcome_with_every_field() {
  ModeOutcome r;
  r.mode = modes::ModeKind::kDdp;
  r.world_size = 3;
  r.trace.losses = {2.5, 2.0};
  r.trace.first_step = 5;
  r.trace.gradients = {{at::ones({2, 2}), at::Tensor()}, {at::full({2, 2}, 3.0), at::zeros({1})}};
  r.trace.param_names = {"w", "b"};
  r.trace.final_state = {{"w", at::arange(4).to(at::kDouble)}, {"n", at::tensor(int64_t{7})}};
  r.check_times = {{0.1, 0.2, 0.3, 0.4, 0.5, 1.5}, {0.0, 0.0, 0.0, 0.0, 0.0, 0.9}};
  r.perf_times = {{0.0, 0.0, 0.0, 0.7, 0.0, 2.0}};
  r.perf_samples_per_step = 48;
  r.backend = "gloo";
  r.bytes_per_step = 1234;
  r.buckets = 3;
  r.peak_device_memory_bytes = {int64_t{1} << 33, 7};
  r.extra_checks = {compare::rank_agreement_check(3, 1, 2, "w")};
  r.evaluation = {
      reports::EvaluationStatus::kDone, "", "held-out", 10, 12, 2, 0.5, 0.75, 0.4, 0.7, "summary"};
  r.trace.comparison = "lockstep";
  r.trace.state_diffs = {{0, "w", reports::Stage::kUpdates, 3e-7, 3e-7, 0},
                         {1, "n", reports::Stage::kBuffers, 0.5, 0.25, 2, 1.5, 4.0},
                         {1, "w[exp_avg]", reports::Stage::kOptimizerState, 2e-6, 2e-6, 0}};
  r.checkpoints = {{2, {'P', 'K', '\0', '\xff'}}, {4, {}}};  // a file's bytes, any of them
  r.trace.loss_scales = {65536.0, 32768.0};
  r.trace.skipped = {true, false};
  r.gradient_collectives_per_step = 5;
  r.hosts = {"node-a", "node-b", "node-a"};
  r.amp_vs_float32 = {2, 1e-3, 1, "fc.weight", 2e-4, 0, "two steps"};
  r.memory = {{0, 10, 20, 30, 40}, {1, 11, 21, 31, 41}};
  return r;
}

void expect_trace_and_timings_back(const ModeOutcome& back, const ModeOutcome& r) {
  EXPECT_EQ(back.mode, modes::ModeKind::kDdp);
  EXPECT_EQ(back.world_size, 3);
  EXPECT_EQ(back.trace.losses, r.trace.losses);
  EXPECT_EQ(back.trace.first_step, 5);
  ASSERT_EQ(back.trace.gradients.size(), 2u);
  EXPECT_TRUE(at::equal(back.trace.gradients[1][0], r.trace.gradients[1][0]));
  EXPECT_FALSE(back.trace.gradients[0][1].defined()) << "a missing gradient must stay missing";
  EXPECT_EQ(back.trace.param_names, r.trace.param_names);
  ASSERT_EQ(back.trace.final_state.size(), 2u);
  EXPECT_EQ(back.trace.final_state[1].first, "n");
  EXPECT_EQ(back.trace.final_state[1].second.scalar_type(), at::kLong);
  EXPECT_DOUBLE_EQ(back.check_times[0].comm_wait, 0.4);
  EXPECT_DOUBLE_EQ(back.check_times[1].total, 0.9);
  ASSERT_EQ(back.perf_times.size(), 1u);
  EXPECT_DOUBLE_EQ(back.perf_times[0].comm_wait, 0.7);
  EXPECT_EQ(back.perf_samples_per_step, 48);
  EXPECT_EQ(back.backend, "gloo");
  EXPECT_EQ(back.bytes_per_step, 1234);
  EXPECT_EQ(back.buckets, 3);
  EXPECT_EQ(back.peak_device_memory_bytes, r.peak_device_memory_bytes);
}

void expect_checks_and_evaluation_back(const ModeOutcome& back) {
  ASSERT_EQ(back.extra_checks.size(), 1u);
  EXPECT_EQ(back.extra_checks[0].status, reports::CheckStatus::kFail);
  EXPECT_EQ(back.extra_checks[0].step, 1);
  EXPECT_EQ(back.extra_checks[0].name, reports::Stage::kRanksBitwiseEqual);
  EXPECT_EQ(back.extra_checks[0].items, 3);
  EXPECT_EQ(back.extra_checks[0].measure, reports::Measure::kExact);
  EXPECT_EQ(back.extra_checks[0].tensor, "w");
  EXPECT_NE(back.extra_checks[0].detail.find("rank 2"), std::string::npos);
  EXPECT_EQ(back.trace.comparison, "lockstep");
  EXPECT_EQ(back.evaluation.status, reports::EvaluationStatus::kDone);
  EXPECT_EQ(back.evaluation.dataset, "held-out");
  EXPECT_EQ(back.evaluation.count, 12);
  EXPECT_EQ(back.evaluation.padded, 2);
  EXPECT_DOUBLE_EQ(back.evaluation.mean_loss_without_padding, 0.7);
  EXPECT_EQ(back.evaluation.summary, "summary");
}

// The lockstep comparison's per-step differences, every family.
void expect_state_diffs_back(const ModeOutcome& back) {
  ASSERT_EQ(back.trace.state_diffs.size(), 3u);
  const compare::StateDiff& d = back.trace.state_diffs[1];
  EXPECT_EQ(d.step, 1);
  EXPECT_EQ(d.tensor, "n");
  EXPECT_EQ(d.family, reports::Stage::kBuffers);
  EXPECT_DOUBLE_EQ(d.error, 0.5);
  EXPECT_DOUBLE_EQ(d.max_rel, 0.25);
  EXPECT_EQ(d.violations, 2);
  EXPECT_DOUBLE_EQ(d.ratio, 1.5);
  EXPECT_DOUBLE_EQ(d.ref_max_abs, 4.0);
  EXPECT_EQ(back.trace.state_diffs[0].family, reports::Stage::kUpdates);
  EXPECT_EQ(back.trace.state_diffs[2].family, reports::Stage::kOptimizerState);
  EXPECT_EQ(back.trace.state_diffs[2].tensor, "w[exp_avg]");
  EXPECT_DOUBLE_EQ(back.trace.state_diffs[0].error, 3e-7);
}

void expect_checkpoints_amp_and_memory_back(const ModeOutcome& back, const ModeOutcome& r) {
  ASSERT_EQ(back.checkpoints.size(), 2u);
  EXPECT_EQ(back.checkpoints[0].step, 2);
  EXPECT_EQ(back.checkpoints[0].bytes, r.checkpoints[0].bytes);
  EXPECT_EQ(back.checkpoints[1].step, 4);
  EXPECT_TRUE(back.checkpoints[1].bytes.empty());
  EXPECT_EQ(back.trace.loss_scales, r.trace.loss_scales);
  EXPECT_EQ(back.trace.skipped, r.trace.skipped);
  EXPECT_EQ(back.gradient_collectives_per_step, 5);
  EXPECT_EQ(back.hosts, r.hosts);
  EXPECT_EQ(back.amp_vs_float32.update_tensor, "fc.weight");
  EXPECT_DOUBLE_EQ(back.amp_vs_float32.loss_rel_error, 2e-4);
  EXPECT_EQ(back.amp_vs_float32.summary, "two steps");
  ASSERT_EQ(back.memory.size(), 2u);
  EXPECT_EQ(back.memory[1].rank, 1);
  EXPECT_EQ(back.memory[1].peak_rss_bytes, 41);
}

// Each group of fields in its own helper; ASSERT_NO_FATAL_FAILURE stops the test at a helper's
// failed ASSERT, as one body would.
TEST(OutcomeCodec, RoundTripsEveryField) {
  const ModeOutcome r = outcome_with_every_field();
  const ModeOutcome back = training::decode_outcome(training::encode_outcome(r));
  ASSERT_NO_FATAL_FAILURE(expect_trace_and_timings_back(back, r));
  ASSERT_NO_FATAL_FAILURE(expect_checks_and_evaluation_back(back));
  ASSERT_NO_FATAL_FAILURE(expect_state_diffs_back(back));
  ASSERT_NO_FATAL_FAILURE(expect_checkpoints_amp_and_memory_back(back, r));
}

}  // namespace
}  // namespace ddpbench::run
