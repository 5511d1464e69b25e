// trace_diff_test.cpp — the judgement of `ddpbench diff` on traces built by hand
// (trace/trace_diff.h): bitwise equal is identical, a difference within the rounding limit is
// rounding and beyond it diverged, in either argument order; an update may differ by the rounding
// of p + update; a later difference is said to follow from the first; traces of different
// experiments are refused naming the field; a trace file round-trips and an edited one is refused.
#include "trace/trace_diff.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "errors.h"
#include "modes/common/model_state.h"
#include "support/subprocess.h"
#include "trace/trace_file.h"

namespace ddpbench::trace {
namespace {

using modes::TraceEntry;
using modes::TracePhase;
using reports::DiffClass;

TraceEntry entry(int64_t step, TracePhase phase, const std::string& name, at::Tensor value) {
  TraceEntry e;
  e.step = step;
  e.phase = phase;
  e.tensor = name;
  e.value = std::move(value);
  return e;
}

// Two steps of a one-parameter model: forward output, loss, gradients, update, parameter.
TraceFile trace_of(float scale = 1.0f) {
  TraceFile t;
  t.experiment = {{"scenario", "toy"},
                  {"dtype", "float32"},
                  {"world_size", "2"},
                  {std::string(kRoundingLimitField), "2e-05"}};
  t.environment = {{"libtorch", "1.13.1"}};
  t.values = "whole";
  ModeEntries m;
  m.mode = "ddp";
  m.forward = "module outputs";
  for (int64_t step = 0; step < 2; ++step) {
    const at::Tensor out = torch::linspace(-1, 1, 64) * scale;
    m.entries.push_back(entry(step, TracePhase::kForward, "fc", out));
    m.entries.push_back(
        entry(step, TracePhase::kLoss, "loss", at::scalar_tensor(0.5, at::kDouble)));
    m.entries.push_back(
        entry(step, TracePhase::kReducedGradient, "fc.weight", torch::ones({8}) * 0.1));
    m.entries.push_back(entry(step, TracePhase::kUpdate, "fc.weight", torch::ones({8}) * -1e-4f));
    m.entries.push_back(entry(step, TracePhase::kParameter, "fc.weight", torch::ones({8}) * 100));
  }
  t.modes.push_back(std::move(m));
  return t;
}

at::Tensor& value(TraceFile& t, size_t i) { return t.modes[0].entries[i].value; }

TEST(TraceJudgement, EqualTracesAreIdentical) {
  const auto r = diff_traces(trace_of(), trace_of(), {});
  EXPECT_EQ(r.overall, DiffClass::kIdentical);
  EXPECT_EQ(r.identical, r.compared);
  EXPECT_EQ(r.compared, 10);
  EXPECT_FALSE(r.failed);
  EXPECT_FALSE(r.first_difference.has_value());
}

TEST(TraceJudgement, AnUlpIsRoundingAndAThousandthDivergesInEitherOrder) {
  TraceFile ulp = trace_of();
  value(ulp, 2) = value(ulp, 2).clone();
  value(ulp, 2)[0] = std::nextafter(0.1f, 1.0f);
  for (const auto& [a, b] : {std::pair{trace_of(), ulp}, std::pair{ulp, trace_of()}}) {
    const auto r = diff_traces(a, b, {});
    EXPECT_EQ(r.overall, DiffClass::kRounding);
    EXPECT_FALSE(r.failed);
    ASSERT_TRUE(r.first_difference.has_value());
    EXPECT_EQ(r.first_difference->phase, "grad_reduced");
    EXPECT_NE(r.first_difference->cause.find("reduction across the 2 ranks"), std::string::npos);
    EXPECT_NEAR(r.first_difference->ulps, 1.0, 0.01);
    EXPECT_TRUE(diff_traces(a, b, {true}).failed);  // --expect identical
  }
  TraceFile far = trace_of();
  value(far, 2) = value(far, 2) * 1.001;
  for (const auto& [a, b] : {std::pair{trace_of(), far}, std::pair{far, trace_of()}}) {
    const auto r = diff_traces(a, b, {});
    EXPECT_EQ(r.overall, DiffClass::kDiverged);
    EXPECT_TRUE(r.failed);
    ASSERT_TRUE(r.first_divergence.has_value());
    EXPECT_EQ(r.first_divergence->step, 0);
    EXPECT_EQ(r.first_divergence->tensor, "fc.weight");
    EXPECT_NEAR(r.first_divergence->error, 1e-3, 1e-5);
  }
}

// As Note [Classing a difference] says, an update of 1e-4 on a parameter of 100 carries the
// rounding of 100 + update, 2 ulps of 100 (1.5e-5, 15% of the update): rounding, not divergence.
TEST(TraceJudgement, AnUpdateMayDifferByTheRoundingOfItsParameter) {
  TraceFile a = trace_of();
  value(a, 3) = value(a, 3) + 7.6e-6f;  // one ulp of 100 in float32
  const auto r = diff_traces(trace_of(), a, {});
  EXPECT_EQ(r.overall, DiffClass::kRounding);
  TraceFile b = trace_of();
  value(b, 3) = value(b, 3) + 1e-5f * 10;  // far beyond 2 ulps of 100
  EXPECT_EQ(diff_traces(trace_of(), b, {}).overall, DiffClass::kDiverged);
}

TEST(TraceJudgement, ALaterDifferenceFollowsFromTheFirst) {
  TraceFile a = trace_of();
  value(a, 0) = value(a, 0) * 1.01;  // step 0's forward
  value(a, 7) = value(a, 7) * 1.01;  // step 1's gradient
  const auto r = diff_traces(trace_of(), a, {});
  ASSERT_EQ(r.differences.size(), 2u);
  EXPECT_NE(r.differences[0].cause.find("the operation that computes fc"), std::string::npos);
  EXPECT_NE(r.differences[1].cause.find("follows from the earlier difference"), std::string::npos)
      << r.differences[1].cause;
}

// A ddp step of three ranks as a version 2 trace records it: the digest of its start, every
// rank's local gradient, the reduced one (`reduce` sums them), the update and the parameter.
TraceFile reduction_trace(const std::function<at::Tensor(const std::vector<at::Tensor>&)>& reduce,
                          int64_t steps = 1, float step_scale = 1.0f) {
  TraceFile t = trace_of();
  t.experiment[2].second = "3";
  ModeEntries& m = t.modes[0];
  m.entries.clear();
  m.divisor = 3;
  for (int64_t step = 0; step < steps; ++step) {
    torch::manual_seed(11 + step);
    std::vector<at::Tensor> c;
    for (int64_t r = 0; r < 3; ++r) c.push_back(torch::randn({256}) * 0.01 * step_scale);
    TraceEntry start = entry(step, TracePhase::kStepStart, "state", torch::zeros({64}, at::kByte));
    if (step > 0) start.value = start.value + static_cast<uint8_t>(step_scale != 1.0f);
    m.entries.push_back(start);
    for (int64_t r = 0; r < 3; ++r) {
      TraceEntry local = entry(step, TracePhase::kLocalGradient, "fc.weight", c[r]);
      local.rank = r;
      m.entries.push_back(local);
    }
    const at::Tensor reduced = reduce(c);
    m.entries.push_back(entry(step, TracePhase::kReducedGradient, "fc.weight", reduced));
    m.entries.push_back(entry(step, TracePhase::kUpdate, "fc.weight", reduced * -0.1));
  }
  return t;
}

at::Tensor rank_order(const std::vector<at::Tensor>& c) {
  return ((c[0] * at::scalar_tensor(1.0 / 3, at::kFloat) +
           c[1] * at::scalar_tensor(1.0 / 3, at::kFloat)) +
          c[2] * at::scalar_tensor(1.0 / 3, at::kFloat));
}

at::Tensor other_order(const std::vector<at::Tensor>& c) { return ((c[2] + c[1]) + c[0]) / 3.0; }

// As Note [A reduction judged by its own contributions] says, two valid sums of the same ranks'
// gradients are rounding, measured on the tensor (the range, per element in ulps, in the record); a
// sum with one rank's gradient scaled by 1 + 1e-5 after its hook saw it diverges there, however
// small against the tensor's largest value, in either order; what follows a rounding difference
// is growth, not a divergence.
TEST(TraceJudgement, AReductionIsHeldToTheRangeOfItsOwnOrders) {
  const auto r = diff_traces(reduction_trace(rank_order), reduction_trace(other_order), {});
  EXPECT_EQ(r.overall, DiffClass::kRounding)
      << (r.first_divergence ? r.first_divergence->cause : "");
  EXPECT_FALSE(r.failed);
  ASSERT_TRUE(r.first_difference.has_value());
  EXPECT_EQ(r.first_difference->phase, "grad_reduced");
  EXPECT_EQ(r.first_difference->held_to, "reduction");
  EXPECT_GT(r.first_difference->range_ulps, 0);
  EXPECT_EQ(r.first_difference->a_outside_ulps, 0);
  EXPECT_EQ(r.growth, 1) << "the update follows from the reduced gradient";
  const auto faulted = [](const std::vector<at::Tensor>& c) {
    std::vector<at::Tensor> f = c;
    f[2] = f[2] * (1 + 1e-5);
    return rank_order(f);
  };
  for (const bool swap : {false, true}) {
    const TraceFile clean = reduction_trace(rank_order), bad = reduction_trace(faulted);
    const auto d = swap ? diff_traces(bad, clean, {}) : diff_traces(clean, bad, {});
    EXPECT_EQ(d.overall, DiffClass::kDiverged);
    ASSERT_TRUE(d.first_divergence.has_value());
    EXPECT_EQ(d.first_divergence->phase, "grad_reduced");
    EXPECT_NE(d.first_divergence->cause.find(swap ? "A's reduced gradient is no sum"
                                                  : "B's reduced gradient is no sum"),
              std::string::npos)
        << d.first_divergence->cause;
    EXPECT_GT(std::max(d.first_divergence->a_outside_ulps, d.first_divergence->b_outside_ulps), 10);
  }
}

// Free-running: a step that starts apart (its digest differs) makes everything it computes grow
// from the earlier rounding, local gradients included; its reduction is still judged, and a
// fault there still diverges.
TEST(TraceJudgement, GrowthFromRoundingIsNotADivergenceButANewFaultIs) {
  const TraceFile a = reduction_trace(rank_order, 2);
  TraceFile b = reduction_trace(other_order, 2);
  // Step 1 of B started apart: its digest and its gradients moved by the trajectory.
  for (TraceEntry& e : b.modes[0].entries) {
    if (e.step != 1) continue;
    if (e.phase == TracePhase::kStepStart) e.value = e.value + static_cast<uint8_t>(1);
    if (e.phase == TracePhase::kLocalGradient) e.value = e.value * 1.01;
  }
  // Re-derive B's step 1 reduction from its own (grown) contributions.
  std::vector<at::Tensor> c;
  for (TraceEntry& e : b.modes[0].entries) {
    if (e.step == 1 && e.phase == TracePhase::kLocalGradient) c.push_back(e.value);
  }
  for (TraceEntry& e : b.modes[0].entries) {
    if (e.step == 1 && e.phase == TracePhase::kReducedGradient) e.value = other_order(c);
    if (e.step == 1 && e.phase == TracePhase::kUpdate) e.value = other_order(c) * -0.1;
  }
  const auto grown = diff_traces(a, b, {});
  EXPECT_EQ(grown.overall, DiffClass::kRounding) << grown.first_divergence->cause;
  EXPECT_EQ(grown.diverged, 0);
  EXPECT_EQ(grown.growth, 6) << "step 0's update; step 1's 3 local gradients, reduced, update";
  for (TraceEntry& e : b.modes[0].entries) {
    if (e.step == 1 && e.phase == TracePhase::kReducedGradient) e.value = e.value * (1 + 1e-4);
  }
  const auto faulted = diff_traces(a, b, {});
  EXPECT_EQ(faulted.overall, DiffClass::kDiverged);
  ASSERT_TRUE(faulted.first_divergence.has_value());
  EXPECT_EQ(faulted.first_divergence->step, 1);
  EXPECT_EQ(faulted.first_divergence->phase, "grad_reduced");
}

TEST(TraceJudgement, DifferentExperimentsAreRefusedNamingTheField) {
  TraceFile other = trace_of();
  other.experiment[0].second = "other";
  try {
    diff_traces(trace_of(), other, {});
    FAIL() << "no refusal";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("scenario is 'toy' in A and 'other' in B"),
              std::string::npos)
        << e.what();
  }
}

TEST(TraceFile, RoundTripsAndAnEditIsRefused) {
  const std::string dir = testing::make_temp_dir("trace");
  const TraceFile t = trace_of(3.0f);
  const std::vector<char> bytes = trace_bytes(t);
  std::ofstream(dir + "/t.pt", std::ios::binary).write(bytes.data(), bytes.size());
  const TraceFile back = read_trace(dir + "/t.pt");
  EXPECT_EQ(back.experiment, t.experiment);
  EXPECT_EQ(back.environment, t.environment);
  ASSERT_EQ(back.modes.size(), 1u);
  ASSERT_EQ(back.modes[0].entries.size(), t.modes[0].entries.size());
  EXPECT_EQ(diff_traces(t, back, {}).overall, DiffClass::kIdentical);
  // Its dtype edited in the file, the digest left as it was: refused, not diffed as float64.
  c10::IValue root = torch::pickle_load(bytes);
  c10::impl::GenericDict experiment = root.toGenericDict().at("experiment").toGenericDict();
  experiment.insert_or_assign("dtype", std::string("float64"));
  const std::vector<char> forged = modes::pickle_for_torch_load(root);
  std::ofstream(dir + "/forged.pt", std::ios::binary).write(forged.data(), forged.size());
  try {
    read_trace(dir + "/forged.pt");
    FAIL() << "an edited trace was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("digest"), std::string::npos) << e.what();
  }
  // Cut the file: refused, never read past its end.
  std::ofstream(dir + "/cut.pt", std::ios::binary).write(bytes.data(), bytes.size() / 2);
  EXPECT_THROW(read_trace(dir + "/cut.pt"), InputError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ddpbench::trace
