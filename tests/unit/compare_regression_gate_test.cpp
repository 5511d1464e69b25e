// compare_regression_gate_test.cpp — the CI gate's decisions: identical runs pass, a failing
// check fails, a check that regressed fails, a slowdown beyond the threshold fails, noise within
// it passes, per-point thresholds apply, missing points, checks and timings fail, other
// configurations and non-finite thresholds are refused. (Slowdowns decided from repeats, loads
// and a history's lookback: compare_gate_repeats_test.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>

#include "compare/gate_thresholds.h"
#include "compare/regression_gate.h"
#include "errors.h"
#include "reports/run/record_fields.h"
#include "support/gate_reports.h"
#include "support/judged_checks.h"

namespace ddpbench::compare {
namespace {

using gate_test::point;
using gate_test::run;
using reports::CheckStatus;
using reports::Stage;

TEST(RegressionGate, IdenticalRunsPass) {
  const GateResult g = run_gate(run(1800), run(1800), {});
  EXPECT_TRUE(g.passed);
  EXPECT_EQ(g.points.size(), 2u);
  EXPECT_DOUBLE_EQ(point(g, "toy_cnn/ddp/2").delta, 0.0);
}

TEST(RegressionGate, AFailingCheckFails) {
  const GateResult g = run_gate(run(1800, CheckStatus::kFail), run(1800, CheckStatus::kFail), {});
  EXPECT_FALSE(g.passed);
  EXPECT_EQ(point(g, "toy_cnn/ddp/2").verdict, "check failed");
}

TEST(RegressionGate, ACheckThatNoLongerPassesFails) {
  const GateResult g = run_gate(run(1800), run(1800, CheckStatus::kExpectedDivergence), {});
  EXPECT_FALSE(g.passed);
  EXPECT_EQ(point(g, "toy_cnn/ddp/2").verdict, "check regressed");
}

TEST(RegressionGate, SlowdownBeyondThresholdFailsNoiseWithinPasses) {
  EXPECT_FALSE(run_gate(run(1800), run(1600), {0.05, {}}).passed);  // -11%
  EXPECT_TRUE(run_gate(run(1800), run(1750), {0.05, {}}).passed);   // -2.8%
  EXPECT_TRUE(run_gate(run(1800), run(2500), {0.05, {}}).passed);   // faster is fine
  // A per-point threshold loosens just that point.
  EXPECT_TRUE(run_gate(run(1800), run(1600), {0.05, {{"toy_cnn/ddp/2", 0.2}}}).passed);
}

TEST(RegressionGate, MissingPointsFail) {
  reports::RunReport current = run(1800);
  current.results.pop_back();
  current = test::with_verdict(current);
  const GateResult g = run_gate(run(1800), current, {});
  EXPECT_FALSE(g.passed);
  EXPECT_EQ(point(g, "toy_cnn/ddp/2").verdict, "missing");
}

TEST(RegressionGate, DifferentConfigurationsAreRefused) {
  reports::RunReport other = run(1800);
  other.config.dtype = "float64";
  EXPECT_THROW(run_gate(run(1800), other, {}), InputError);
  other = run(1800);
  other.results[1].backend = "mpi";
  EXPECT_THROW(run_gate(run(1800), other, {}), InputError);
  other = run(1800);
  other.config.scenario = "linear_mse";
  EXPECT_THROW(run_gate(run(1800), other, {}), InputError);
}

// Every setting that changes the numbers is refused by name, not compared silently.
TEST(RegressionGate, EveryConfigurationDifferenceIsNamed) {
  using Edit = std::function<void(reports::RunReport&)>;
  const std::vector<std::pair<std::string, Edit>> cases = {
      {"config.data_dir", [](auto& r) { r.config.data_dir = "/data/cifar"; }},
      {"config.ddp.impl", [](auto& r) { r.config.ddp.impl = "naive"; }},
      {"config.threads", [](auto& r) { r.config.threads = 8; }},
      {"config.seed", [](auto& r) { r.config.seed = 7; }},
      {"config.steps", [](auto& r) { r.config.steps = 300; }},
      {"context.device", [](auto& r) { r.context.device = "cuda"; }},
      {"config.world_size", [](auto& r) { r.config.world_size = 4; }},
      {"config.ddp.bucket_cap_bytes", [](auto& r) { r.config.ddp.bucket_cap_bytes = 1; }},
      {"config.ddp.comm_hook", [](auto& r) { r.config.ddp.comm_hook = "fp16"; }},
      {"config.warmup_steps", [](auto& r) { r.config.warmup_steps = 9; }},
      // The battery's misses: accumulation, the sampler's shuffle, no_sync, and the scenario
      // file's keys (its tolerances among them).
      {"config.accumulation_steps", [](auto& r) { r.config.accumulation_steps = 4; }},
      {"config.sampler.shuffle", [](auto& r) { r.config.sampler.shuffle = false; }},
      {"config.no_sync", [](auto& r) { r.config.no_sync = false; }},
      {"config.scenario_yaml",
       [](auto& r) { r.config.scenario_yaml = "TOL:\n  GRAD_FLOAT32: 1e6"; }},
      {"config.inject_fault", [](auto& r) { r.config.inject_fault = "grad:rank=1,step=1"; }},
      // Mixed precision is another computation: a bf16 run is not a float32 run's successor.
      {"config.amp", [](auto& r) { r.config.amp = "bf16"; }},
  };
  for (const auto& [field, edit] : cases) {
    reports::RunReport other = run(1800);
    edit(other);
    try {
      run_gate(run(1800), other, {});
      ADD_FAILURE() << field << ": compared silently";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
}

// Sets one field, found by its path in the field lists, to another value in its bounds.
struct MutateOne {
  std::string target;
  std::string prefix;
  bool done = false;

  template <typename T>
  void operator()(const char* key, T& field, const reports::FieldSpec& spec) {
    const std::string path = prefix + key;
    if constexpr (reports::kIsRecord<T>) {
      MutateOne sub{target, path + ".", false};
      reports::fields(sub, field);
      done = done || sub.done;
    } else {
      if (path != target) return;
      done = true;
      if constexpr (std::is_same_v<T, std::string>) {
        field += "x";
      } else if constexpr (std::is_same_v<T, bool>) {
        field = !field;
      } else if constexpr (std::is_same_v<T, int64_t>) {
        field = field < spec.int_hi ? field + 1 : field - 1;
      } else if constexpr (std::is_same_v<T, double>) {
        field = field * 2 + 1;
      } else if constexpr (std::is_enum_v<T>) {
        const auto& table = reports::EnumNames<T>::kTable;
        field = table[(static_cast<size_t>(field) + 1) % table.size()].first;
      } else {
        field.emplace_back();
      }
    }
  }
};

// Every field of a record the lists mark as changing the numbers, by path.
struct NumbersPaths {
  std::string prefix;
  std::vector<std::string>& out;
  template <typename T>
  void operator()(const char* key, const T& field, const reports::FieldSpec& spec) {
    if constexpr (reports::kIsRecord<T>) {
      NumbersPaths sub{prefix + key + ".", out};
      reports::fields(sub, field);
    } else if (spec.affects != reports::Affects::kReport) {  // both runs below are timed
      out.push_back(prefix + key);
    }
  }
};

// Generated from the declared field lists: a field that changes the numbers and is added later is
// compared by the gate without anyone remembering to, and this test covers it.
TEST(RegressionGate, EveryFieldThatChangesTheNumbersIsComparedByName) {
  const reports::RunReport base = run(1800);
  std::vector<std::string> paths;
  NumbersPaths context{"context.", paths};
  reports::fields(context, base.context);
  NumbersPaths config{"config.", paths};
  reports::fields(config, base.config);
  ASSERT_GT(paths.size(), 40u);
  for (const std::string& path : paths) {
    reports::RunReport other = base;
    MutateOne context_edit{path, "context."};
    reports::fields(context_edit, other.context);
    MutateOne config_edit{path, "config."};
    reports::fields(config_edit, other.config);
    ASSERT_TRUE(context_edit.done || config_edit.done) << path;
    try {
      run_gate(base, other, {});
      ADD_FAILURE() << path << ": compared silently";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  // And the rule of every check (measure, tolerances, limit), point by point.
  std::vector<std::string> rule;
  NumbersPaths check{"", rule};
  reports::fields(check, base.results[1].checks[0]);
  EXPECT_EQ(rule.size(), 5u);
  for (const std::string& field : rule) {
    if (field == "name") continue;  // another check is a vanished one (tested below)
    reports::RunReport other = base;
    MutateOne edit{field, ""};
    reports::fields(edit, other.results[1].checks[0]);
    other.results[1].checks[0].status =
        reports::check_status(other.results[1].checks[0], other.results[1].first_divergence);
    other = test::with_verdict(other);
    try {
      run_gate(base, other, {});
      ADD_FAILURE() << field << ": a check judged by another rule was compared";
    } catch (const InputError& e) {
      // Named as the gate's point (a rule that differs) or as the report's field (a limit its
      // measure never has, refused before any comparison).
      const std::string what = e.what();
      EXPECT_TRUE(what.find("results[toy_cnn/ddp/2].checks[gradients]." + field) !=
                      std::string::npos ||
                  what.find("results[1].checks[0]." + field) != std::string::npos)
          << what;
    }
  }
}

// Issue 31 defect 3: widening the tolerances hid a 10x gradient fault from the gate.
TEST(RegressionGate, AWidenedToleranceIsAnotherRuleAndRefused) {
  reports::RunReport widened = run(1800);
  reports::CheckRecord& c = widened.results[1].checks[0];
  c.atol = 1e6;
  c.rtol = 1e6;
  EXPECT_THROW(run_gate(run(1800), widened, {}), InputError);
}

// Issue 31 defect 10: two reports that judged and timed nothing are no pass.
TEST(RegressionGate, ReportsThatComparedNothingDoNotPass) {
  reports::RunReport nothing;
  nothing.config.scenario = "linear_mse";
  nothing.results.push_back({});
  nothing = test::with_verdict(nothing);
  ASSERT_EQ(nothing.verdict, reports::Verdict::kNotJudged);
  const GateResult g = run_gate(nothing, nothing, {});
  EXPECT_FALSE(g.passed);
  EXPECT_EQ(g.points.at(0).verdict, "nothing compared");
}

// The gate recomputes each report's verdict from its numbers, whoever built the records.
TEST(RegressionGate, AStatusTheNumbersContradictIsRefused) {
  reports::RunReport edited = run(1800, CheckStatus::kFail);
  edited.results[1].checks[0].status = CheckStatus::kPass;
  edited.verdict = reports::Verdict::kPass;
  EXPECT_THROW(run_gate(run(1800), edited, {}), InputError);
}

TEST(RegressionGate, NonFiniteOrOutOfRangeThresholdsAreRefused) {
  // -0.0 too (issue 73 C8): `--max-slowdown -0` printed "-0.0% allowed".
  for (double bad : {std::nan(""), HUGE_VAL, -HUGE_VAL, -0.1, 1.5, -0.0}) {
    GateThresholds t;
    t.max_slowdown = bad;
    EXPECT_THROW(run_gate(run(1800), run(180), t), InputError) << bad;
    GateThresholds per_point;
    per_point.point_max_slowdown["toy_cnn/ddp/2"] = bad;
    EXPECT_THROW(run_gate(run(1800), run(180), per_point), InputError) << bad;
  }
}

// A check the baseline ran and the current run lacks (a --perf-only run, a comparison that drops
// the updates check) is a regression unless the user accepts it.
TEST(RegressionGate, ChecksThatVanishedFailUnlessAllowed) {
  reports::RunReport current = run(1800);
  current.results[1].checks.clear();
  current = test::with_verdict(current);
  const GateResult g = run_gate(run(1800), current, {});
  EXPECT_FALSE(g.passed);
  EXPECT_EQ(point(g, "toy_cnn/ddp/2").verdict, "missing");
  EXPECT_NE(point(g, "toy_cnn/ddp/2").detail.find("gradients"), std::string::npos)
      << point(g, "toy_cnn/ddp/2").detail;

  GateThresholds allow;
  allow.allow_missing = true;
  const GateResult allowed = run_gate(run(1800), current, allow);
  EXPECT_TRUE(allowed.passed);
  EXPECT_NE(point(allowed, "toy_cnn/ddp/2").detail.find("gradients"), std::string::npos);
}

// A point the baseline timed and the current run did not (--check-only) cannot be compared.
TEST(RegressionGate, ThroughputThatVanishedFailsUnlessAllowed) {
  const GateResult g = run_gate(run(1800), run(0), {});
  EXPECT_FALSE(g.passed);
  EXPECT_EQ(point(g, "toy_cnn/ddp/2").verdict, "missing");
  EXPECT_NE(point(g, "toy_cnn/ddp/2").detail.find("timed"), std::string::npos);
  GateThresholds allow;
  allow.allow_missing = true;
  EXPECT_TRUE(run_gate(run(1800), run(0), allow).passed);
}

// A check-only run of single,ddp: single has no checks of its own and is not timed, and is the
// reference ddp's checks judge against. Issue 51 defect 1: two identical such runs were
// "nothing compared: ... gate: FAIL", also with --allow-missing.
reports::RunReport check_only(CheckStatus ddp_check_status = CheckStatus::kPass) {
  reports::RunReport r = run(0, ddp_check_status);
  r.results[0].throughput.samples_per_s = 0;
  r.config.warmup_steps = 0;  // no timed phase, no warm-up
  return test::with_verdict(r);
}

TEST(RegressionGate, CheckOnlyRunsAreGatedByTheirChecks) {
  const GateResult g = run_gate(check_only(), check_only(), {});
  EXPECT_TRUE(g.passed);
  EXPECT_EQ(point(g, "toy_cnn/single/1").verdict, "ok");
  EXPECT_NE(point(g, "toy_cnn/single/1").detail.find("reference"), std::string::npos);
  // The reference passes with the checks that judge against it, and fails with them.
  EXPECT_FALSE(run_gate(check_only(), check_only(CheckStatus::kFail), {}).passed);
}

// A timed baseline (warm-up 2) against a check-only current (warm-up 0): the warm-up shapes only
// timings, which --allow-missing gives up; it was refused as "differ in config.warmup_steps".
// Between two timed runs it still counts.
TEST(RegressionGate, TheWarmUpCountsOnlyWhereBothRunsTimed) {
  reports::RunReport timed = run(1800);
  timed.config.warmup_steps = 2;
  timed = test::with_verdict(timed);
  GateThresholds allow;
  allow.allow_missing = true;
  EXPECT_TRUE(run_gate(timed, check_only(), allow).passed);
  EXPECT_FALSE(run_gate(timed, check_only(), {}).passed);
  reports::RunReport other = timed;
  other.config.warmup_steps = 5;
  EXPECT_THROW(run_gate(timed, other, {}), InputError);
}

// Issue 51 defect 13: the same model bytes through a symlink were refused ("differ in
// config.scenario_yaml"): a file is compared by its content's hash (config.model), not its path.
TEST(RegressionGate, AFileIsComparedByItsContentNotItsPath) {
  const auto with_files = [](const std::string& model, const std::string& hash) {
    reports::RunReport r = run(1800);
    r.config.model = "TorchScript sha256:" + hash;
    r.config.scenario_yaml =
        "SCENARIO:\n  BASE: linear_mse\nDATA:\n  FILE: \"\"  # none\n"
        "MODEL:\n  FILE: " +
        model + "  # TorchScript file\n  SYNC_BN: false\n";
    return test::with_verdict(r);
  };
  EXPECT_TRUE(run_gate(with_files("/a/mlp.pt", "aa"), with_files("/b/link.pt", "aa"), {}).passed);
  EXPECT_THROW(run_gate(with_files("/a/mlp.pt", "aa"), with_files("/a/mlp.pt", "bb"), {}),
               InputError);
  reports::RunReport other_key = with_files("/a/mlp.pt", "aa");
  other_key.config.scenario_yaml += "  SYNC_BN: true\n";
  EXPECT_THROW(run_gate(with_files("/a/mlp.pt", "aa"), test::with_verdict(other_key), {}),
               InputError);
}

TEST(RegressionGate, PerPointThresholdsMustNameBaselinePoints) {
  GateThresholds t;
  t.point_max_slowdown["toy_cnn/ddp/2"] = 0.1;
  EXPECT_NO_THROW(run_gate(run(1800), run(1800), t));
  t.point_max_slowdown["toy_cnn/ddp/4"] = 0.1;
  EXPECT_THROW(run_gate(run(1800), run(1800), t), InputError);
}

TEST(GateThresholds, AFolderOrARepeatedKeyIsRefused) {
  EXPECT_THROW(load_gate_thresholds(::testing::TempDir(), std::nullopt), InputError);
  const std::string path = ::testing::TempDir() + "/gate_thresholds_repeated.yaml";
  std::ofstream(path) << "max_slowdown: 0.1\nmax_slowdown: 0.9\n";
  EXPECT_THROW(load_gate_thresholds(path, std::nullopt), InputError);
  std::ofstream(path) << "points:\n  toy_cnn/ddp/2: 0.1\n  toy_cnn/ddp/2: 0.9\n";
  EXPECT_THROW(load_gate_thresholds(path, std::nullopt), InputError);
}

TEST(GateThresholds, TheFileIsValidatedAndTheCommandLineWins) {
  const std::string path = ::testing::TempDir() + "/gate_thresholds_test.yaml";
  const auto load = [&path](const std::string& yaml, std::optional<double> flag) {
    std::ofstream(path) << yaml;
    return load_gate_thresholds(path, flag);
  };
  GateThresholds t = load("max_slowdown: 0.1\npoints:\n  toy_cnn/ddp/2: 0.25\n", std::nullopt);
  EXPECT_DOUBLE_EQ(t.max_slowdown, 0.1);
  EXPECT_DOUBLE_EQ(t.point_max_slowdown.at("toy_cnn/ddp/2"), 0.25);
  EXPECT_DOUBLE_EQ(load("max_slowdown: 0.1\n", 0.02).max_slowdown, 0.02);  // the flag wins
  EXPECT_DOUBLE_EQ(load("points: {}\n", std::nullopt).max_slowdown, 0.05);
  for (const char* bad :
       {"max_slowdown: -5\n", "max_slowdown: 2\n", "max_slowdwn: 0.1\n", "max_slowdown: .nan\n",
        "points:\n  toy_cnn: 0.1\n", "points:\n  toy_cnn/ddp/two: 0.1\n", "- 0.1\n"}) {
    try {
      load(bad, std::nullopt);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--thresholds"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ddpbench::compare
