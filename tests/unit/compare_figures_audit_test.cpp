// compare_figures_audit_test.cpp — issue 73 C7 in process, field by field: every figure a point's
// stored samples determine (compare/throughput_spread.h: the percentiles, mean, CV, weak reasons,
// samples/s per device, bus bandwidth, a per-rank mode's comm_wait_s phase and its ranks' steps) is
// refused when edited, naming the field; an HSDP report's config.shard_group and rank 0's
// collective counts are refused when they contradict each other or the collectives check
// (compare/collectives_audit.h), and a report as a run writes it, clean or with the `replica`
// fault's count, is not. tests/e2e/figures_audit_e2e_test.cpp takes edits of real reports through
// `report` and `gate`.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "compare/collectives_audit.h"
#include "compare/throughput_spread.h"
#include "errors.h"

namespace ddpbench::compare {
namespace {

using reports::ThroughputRecord;

// The message of the InputError `f` throws, or "" when it throws none.
std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// A ddp point at 2 ranks as a run records it: two repeats of 4 steps, rank 0 the slower in
// repeat 1 (its compute and wait make each step), its figures derived at efficiency 0.9.
ThroughputRecord timed_point() {
  ThroughputRecord t;
  t.samples_per_step = 8;
  t.bytes_allreduced_per_step = 1 << 20;
  t.repeats = {{{1.0e-3, 1.03e-3, 0.99e-3, 1.01e-3}}, {{1.0e-3, 1.02e-3, 0.98e-3, 1.01e-3}}};
  reports::RankTimingRecord r0{0, {}, {}}, r1{1, {}, {}};
  for (double step : t.repeats[0].step_times_s) {
    r0.compute_s.push_back(step - 2e-4);
    r0.comm_wait_s.push_back(2e-4);
    r1.compute_s.push_back(0.5 * step);
    r1.comm_wait_s.push_back(3e-4);
  }
  t.ranks = {r0, r1};
  derive_figures(t, 2, 0.9);
  return t;
}

void audit(const ThroughputRecord& t) {
  audit_throughput("results[2].throughput", t, reports::kSchemaVersion, 2, 0.9);
}

TEST(AuditedFigures, EveryFigureTheSamplesDetermineIsRefusedWhenEdited) {
  const ThroughputRecord clean = timed_point();
  ASSERT_EQ(refusal([&] { audit(clean); }), "");
  // Repeat 1's waits: 3e-4 on rank 1 every step, the longest.
  EXPECT_DOUBLE_EQ(clean.phases.comm_wait, 3e-4);
  ASSERT_EQ(clean.weak_reasons.size(), 1u);  // 8 timed steps, a CV of 1.5%
  struct Edit {
    const char* field;
    std::function<void(ThroughputRecord&)> apply;
  };
  const std::vector<Edit> edits = {
      {"weak_reasons", [](ThroughputRecord& t) { t.weak_reasons.clear(); }},
      {"step_time_cv", [](ThroughputRecord& t) { t.step_time_cv *= 2; }},
      {"step_time_p50_s", [](ThroughputRecord& t) { t.step_time_p50_s = 1; }},
      {"step_time_p90_s", [](ThroughputRecord& t) { t.step_time_p90_s /= 2; }},
      {"step_time_p99_s", [](ThroughputRecord& t) { t.step_time_p99_s *= 1.01; }},
      {"step_time_mean_s", [](ThroughputRecord& t) { t.step_time_mean_s = 1e-3; }},
      {"samples_per_s_per_device", [](ThroughputRecord& t) { t.samples_per_s_per_device *= 2; }},
      {"bus_bandwidth_gb_s", [](ThroughputRecord& t) { t.bus_bandwidth_gb_s *= 2; }},
      {"phases.comm_wait_s", [](ThroughputRecord& t) { t.phases.comm_wait = 0; }},
      // A rank's wait beyond the step it is part of, and the slowest rank's step shortened.
      {"ranks[1] computed and waited", [](ThroughputRecord& t) { t.ranks[1].comm_wait_s[2] = 1; }},
      {"ranks[1] computed and waited", [](ThroughputRecord& t) { t.ranks[0].compute_s[0] = 1e-5; }},
      {"ranks[1] is rank 1 with 4 compute and 3 wait times",
       [](ThroughputRecord& t) { t.ranks[1].comm_wait_s.pop_back(); }},
  };
  for (const Edit& e : edits) {
    ThroughputRecord t = clean;
    e.apply(t);
    const std::string why = refusal([&] { audit(t); });
    EXPECT_NE(why.find(e.field), std::string::npos) << e.field << ": " << why;
    EXPECT_NE(why.find("was the file edited?"), std::string::npos) << why;
  }
}

// The reasons of Note [Weak figures] depend on the point's scaling efficiency too, which the
// report audit recomputes against the single-device baseline; a CV 0.35 series flags the spread.
TEST(AuditedFigures, TheWeakReasonsFollowTheCvAndTheEfficiency) {
  ThroughputRecord t = timed_point();
  derive_figures(t, 2, 1.2);
  EXPECT_EQ(t.weak_reasons.size(), 2u);
  EXPECT_NE(refusal([&] { audit(t); }).find("weak_reasons holds 2 reason(s)"), std::string::npos);
  ThroughputRecord noisy;
  noisy.samples_per_step = 8;
  noisy.repeats = {{{1e-3, 2e-3, 1e-3, 2e-3, 1e-3, 2e-3, 1e-3, 2e-3, 1e-3, 2e-3}}};
  derive_figures(noisy, 1, -1);
  ASSERT_EQ(noisy.weak_reasons.size(), 1u);
  EXPECT_NE(noisy.weak_reasons[0].find("step-time CV 0.35"), std::string::npos);
  noisy.weak_reasons.clear();
  EXPECT_NE(refusal([&] {
              audit_throughput("t", noisy, reports::kSchemaVersion, 1, -1);
            }).find("step-time CV 0.35"),
            std::string::npos);
}

// Zero stage 2 over shard groups of 2 at 4 ranks, one bucket, two checked steps: each step's
// reduction is one reduce-scatter and two all-reduces (the used-parameter map's, the replicas').
reports::RunReport hsdp_report() {
  reports::RunReport r;
  r.config.modes = {"single", "zero"};
  r.config.world_size = 4;
  r.config.zero_stage = 2;
  r.config.shard_group = 2;
  reports::ModeResult single;
  reports::ModeResult zero;
  zero.mode = reports::Mode::kZero;
  zero.world_size = 4;
  for (int64_t step = 0; step < 2; ++step) {
    reports::StepCollectivesRecord c;
    c.step = step;
    c.micro_steps = 1;
    c.reduction_allreduce = 2;
    c.reduction_reduce_scatter = 1;
    zero.collectives.push_back(c);
  }
  reports::CheckRecord check;
  check.name = reports::Stage::kCollectives;
  check.measure = reports::Measure::kExact;
  check.items = 8;
  zero.checks = {check};
  r.results = {single, zero};
  return r;
}

void audit_mesh(const reports::RunReport& r) {
  audit_shard_group(r);
  for (size_t i = 0; i < r.results.size(); ++i) audit_collectives(r, i);
}

// What the `replica` fault records: rank 0's step 1 without its replica all-reduce, and the check
// naming rank 0 at step 1.
void fault_at_step_one(reports::RunReport& r) {
  reports::ModeResult& zero = r.results[1];
  zero.collectives[1].reduction_allreduce = 1;
  zero.checks[0].outside = 4;
  zero.checks[0].error = 1;
  zero.checks[0].tensor = "rank 0";
  zero.checks[0].step = 1;
}

TEST(AuditedFigures, AnHsdpMeshAndItsCollectiveCountsMustAgree) {
  ASSERT_EQ(refusal([] { audit_mesh(hsdp_report()); }), "");
  reports::RunReport faulted = hsdp_report();
  fault_at_step_one(faulted);
  ASSERT_EQ(refusal([&] { audit_mesh(faulted); }), "");
  struct Edit {
    const char* named;
    std::function<void(reports::RunReport&)> apply;
  };
  const std::vector<Edit> edits = {
      {"config.shard_group is 1", [](auto& r) { r.config.shard_group = 1; }},
      {"config.shard_group is 4", [](auto& r) { r.config.shard_group = 4; }},
      {"config.shard_group is 3", [](auto& r) { r.config.shard_group = 3; }},
      {"config.shard_group 0", [](auto& r) { r.config.shard_group = 0; }},
      {"config.zero_stage is 1", [](auto& r) { r.config.zero_stage = 1; }},
      {"collectives[1] says rank 0 issued 1 all-reduce(s)",
       [](auto& r) { r.results[1].collectives[1].reduction_allreduce = 1; }},
      {"collectives[0] says rank 0 issued 2 all-reduce(s) and 2 reduce-scatter(s)",
       [](auto& r) { r.results[1].collectives[0].reduction_reduce_scatter = 2; }},
      {"has no collectives check", [](auto& r) { r.results[1].checks.clear(); }},
      // The fault's count edited back: the check still names rank 0 at step 1.
      {"says rank 0 issued the wrong collectives in step 1",
       [](auto& r) {
         fault_at_step_one(r);
         r.results[1].collectives[1].reduction_allreduce = 2;
       }},
      // The fault's check edited to pass beside its count.
      {"found every rank's counts right",
       [](auto& r) {
         fault_at_step_one(r);
         r.results[1].checks[0].outside = 0;
       }},
  };
  for (const Edit& e : edits) {
    reports::RunReport r = hsdp_report();
    e.apply(r);
    const std::string why = refusal([&] { audit_mesh(r); });
    EXPECT_NE(why.find(e.named), std::string::npos) << e.named << ": " << why;
  }
}

// Without HSDP, stage 2 issues the used-parameter map's all-reduce alone (and --amp fp16's overflow
// agreement); stage 1 no reduce-scatter, whatever its bucket count; under accumulation without
// no_sync every micro-step synchronises.
TEST(AuditedFigures, TheReductionRuleFollowsTheStageAmpAndAccumulation) {
  reports::RunReport r = hsdp_report();
  r.config.shard_group = 0;
  for (auto& c : r.results[1].collectives) c.reduction_allreduce = 1;
  EXPECT_EQ(refusal([&] { audit_mesh(r); }), "");
  r.config.amp = "fp16";
  EXPECT_NE(refusal([&] { audit_mesh(r); }), "");
  for (auto& c : r.results[1].collectives) c.reduction_allreduce = 2;
  EXPECT_EQ(refusal([&] { audit_mesh(r); }), "");
  r.config.amp = "off";
  r.config.zero_stage = 1;
  for (auto& c : r.results[1].collectives) {
    c.reduction_allreduce = 4;  // three buckets and the map
    c.reduction_reduce_scatter = 0;
  }
  EXPECT_EQ(refusal([&] { audit_mesh(r); }), "");
  r.results[1].collectives[1].reduction_reduce_scatter = 3;
  EXPECT_NE(refusal([&] { audit_mesh(r); }).find("collectives[1]"), std::string::npos);
  r = hsdp_report();
  r.config.no_sync = false;
  r.config.accumulation_steps = 2;
  for (auto& c : r.results[1].collectives) {
    c.reduction_allreduce = 4;
    c.reduction_reduce_scatter = 2;
  }
  EXPECT_EQ(refusal([&] { audit_mesh(r); }), "");
}

}  // namespace
}  // namespace ddpbench::compare
