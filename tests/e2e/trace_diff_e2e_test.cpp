// trace_diff_e2e_test.cpp — `ddpbench run --trace` and `ddpbench diff A B` through the real binary,
// in both directions: the same command twice is identical on every tensor; a grad fault is a
// divergence named at its step, mode, phase and parameter (exit 1), whichever trace comes first;
// ddpbench's engine against PyTorch's c10d Reducer, and gloo against shm, are identical at world 2
// (world 3 and mpi: tests/scripts/backend_trace_diff.sh, in the 2.x suite); traces of different
// experiments and damaged or swapped traces are refused (exit 2, one line), never judged.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/cli_runner.h"
#include "support/script_test_models.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
using testing::ddpbench;

class TraceDiff : public testing::TempDirTest {
 protected:
  // A traced, checked toy_cnn run on 2 ranks (about a second), into path(name); an expected exit
  // below 0 takes whatever the run decides.
  std::string run(const std::string& name, std::vector<std::string> extra = {},
                  int expected_exit = 0, const char* gpus = "2") {
    std::vector<std::string> args = {"run",     "--scenario", "toy_cnn", "--gpus",
                                     gpus,      "--steps",    "3",       "--check-only",
                                     "--trace", "--quiet",    "--out",   path(name)};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = ddpbench(args);
    if (expected_exit >= 0) EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
    return path(name);
  }
  // diff a b into path(out); its diff.json.
  nlohmann::json diff(const std::string& a, const std::string& b, const std::string& out,
                      int expected_exit, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"diff", a, b, "--out", path(out)};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = ddpbench(args);
    if (expected_exit >= 0) EXPECT_EQ(r.exit_code, expected_exit) << r.out << r.err;
    EXPECT_NE(r.exit_code, 2) << r.out << r.err;
    last_out_ = r.out;
    return testing::read_json(path(out) + "/diff.json");
  }
  static void expect_refused(const testing::ProcessResult& r, const std::string& named) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
  }
  std::string last_out_;
};

TEST_F(TraceDiff, TheSameCommandTwiceIsIdenticalOnEveryTensor) {
  const std::string a = run("a");
  const std::string b = run("b");
  const auto report = testing::read_json(a + "/report.json");
  EXPECT_EQ(report["config"]["trace_file"], "trace.pt");
  EXPECT_EQ(report["config"]["trace_sha256"].get<std::string>().size(), 64u);
  const auto d = diff(a, b, "d", 0, {"--expect", "identical"});
  EXPECT_EQ(d["class"], "identical");
  EXPECT_EQ(d["identical"], d["compared"]);
  // Every phase of a step is in the trace: the forward of each module, the loss, the gradients
  // before and after the reduction, the update, the parameter, the optimizer state.
  EXPECT_GT(d["compared"].get<int64_t>(), 250);
  EXPECT_TRUE(d["first_difference"].is_null());
  EXPECT_NE(last_out_.find("IDENTICAL"), std::string::npos) << last_out_;
  for (const char* file : {"diff.txt", "diff.json", "diff.html"}) {
    EXPECT_TRUE(std::filesystem::exists(path("d") + "/" + file)) << file;
  }
}

// The fault: rank 1's gradient scaled by 1 + 1e-4 at step 2. Rank 0's trace sees its own
// local gradient identical and the averaged one beyond rounding.
TEST_F(TraceDiff, AGradFaultIsADivergenceAtItsStepAndParameterInBothOrders) {
  const std::string clean = run("clean");
  const std::string faulted = run("faulted", {"--inject-fault", "grad:rank=1,step=2,eps=1e-4"}, 1);
  for (const auto& [a, b] : {std::pair{clean, faulted}, std::pair{faulted, clean}}) {
    const auto d = diff(a, b, "d_" + std::to_string(a == clean), 1);
    ASSERT_FALSE(d["first_divergence"].is_null()) << last_out_;
    const auto& first = d["first_divergence"];
    EXPECT_EQ(first["step"], 2);
    EXPECT_EQ(first["mode"], "ddp");
    EXPECT_EQ(first["phase"], "grad_reduced");
    EXPECT_EQ(first["tensor"], "conv1.weight");
    EXPECT_EQ(first["class"], "diverged");
    EXPECT_EQ(d["first_difference"], first);  // nothing differed before it
    bool fault_listed = false;
    for (const auto& f : d["environment"]) {
      if (f["field"] == "inject_fault") fault_listed = f["differs"].get<bool>();
    }
    EXPECT_TRUE(fault_listed);
  }
}

// At 1e-7 the fault is at float32's rounding, and still no sum of two ranks' gradients gives what
// rank 1's scaled one made: a sum of two has one rounding in any order (Note [A reduction judged
// by its own contributions]), so its reduced gradient lies outside the measured range by an ulp
// or more, a divergence. Under --trace the run takes the fault it cannot judge, and FAILs saying
// no check caught it (Note [Detectable faults]).
TEST_F(TraceDiff, AFaultAtRoundingSizeIsNoSumOfTwoRanks) {
  const std::string clean = run("clean");
  const std::string faulted = run("faulted", {"--inject-fault", "grad:rank=1,step=2,eps=1e-7"}, 1);
  const auto d = diff(clean, faulted, "d", 1);
  ASSERT_FALSE(d["first_divergence"].is_null()) << last_out_;
  const auto& first = d["first_divergence"];
  EXPECT_EQ(first["step"], 2);
  EXPECT_EQ(first["phase"], "grad_reduced");
  EXPECT_EQ(first["rounding"]["held_to"], "reduction");
  EXPECT_EQ(first["rounding"]["range_ulps"], 0) << "two ranks: every order gives the same bytes";
  EXPECT_GE(first["rounding"]["b_outside_ulps"].get<double>(), 1);
}

// The hostile run's false PASSes of diff (issue 73, A2): a fault on a small tensor, judged on the
// phase's largest gradient, vanished into "rounding". Held to its own reduction's measured range,
// it diverges at its step and tensor: tiny_resnet at world 2 with 1e-4 on a BatchNorm bias
// (2.05e5 ulps off), toy_cnn at world 3 with 1e-5 on rank 2 (4.5e3 ulps off, the range 64 wide),
// torchvision's shufflenet_v2_x0_5 scripted, at world 3 with 1e-3 on rank 2 (410 ulps off, the
// range 3 wide).
TEST_F(TraceDiff, SmallFaultsOnSmallTensorsDivergeAtTheirStepAndTensor) {
  struct Case {
    std::vector<std::string> args;
    const char* fault;
    const char* tensor;
  };
  const std::string shufflenet =
      testing::make_script_test_models(testing::ScriptTestModels::kFloor) +
      "/shufflenet_v2_x0_5.pt";
  for (const Case& c :
       {Case{{"--scenario", "tiny_resnet", "--gpus", "2", "--batch-size", "8"},
             "grad:rank=1,step=1,eps=1e-4,tensor=layer4.0.bn2.bias", "layer4.0.bn2.bias"},
        Case{{"--scenario", "toy_cnn", "--gpus", "3", "--modes", "ddp"},
             "grad:rank=2,step=1,eps=1e-5", "conv1.weight"},
        Case{{"--model", shufflenet, "--input-shape", "3,32,32", "--num-classes", "10", "--gpus",
              "3", "--modes", "ddp", "--batch-size", "6", "--eval-size", "0"},
             "grad:rank=2,step=1,eps=1e-3", "conv1.0.weight"}}) {
    const std::string name = c.args[0] == "--model" ? "shufflenet" : c.args[1];
    std::vector<std::string> clean_args = {"run",     "--steps", "2",     "--check-only",
                                           "--trace", "--quiet", "--out", path(name + "_clean")};
    clean_args.insert(clean_args.end(), c.args.begin(), c.args.end());
    ASSERT_EQ(ddpbench(clean_args).exit_code, 0) << name;
    std::vector<std::string> faulted_args = clean_args;
    faulted_args[7] = path(name + "_fault");
    faulted_args.insert(faulted_args.end(), {"--inject-fault", c.fault});
    ASSERT_EQ(ddpbench(faulted_args).exit_code, 1) << name;
    const auto d = diff(path(name + "_clean"), path(name + "_fault"), name + "_d", 1);
    ASSERT_FALSE(d["first_divergence"].is_null()) << last_out_;
    EXPECT_EQ(d["first_divergence"]["step"], 1) << name;
    EXPECT_EQ(d["first_divergence"]["phase"], "grad_reduced") << name;
    EXPECT_EQ(d["first_divergence"]["tensor"], c.tensor) << name;
    EXPECT_GT(d["first_divergence"]["rounding"]["b_outside_ulps"].get<double>(), 100) << name;
  }
}

// The hostile run's false FAIL of diff (issue 73, A3): gloo and shm sum three ranks' gradients in
// different orders, and free-running steps of tiny_resnet grow that rounding until the
// trajectories part (ten steps: 1,677 of 2,674 tensors "diverged" before; five here, the ten of
// the issue in tests/scripts/backend_trace_diff.sh). The first difference is the reduction's
// measured rounding, everything after it grows from it: exit 0, nothing diverged.
TEST_F(TraceDiff, FreeRunningGrowthFromAReorderedSumIsNotADivergence) {
  for (const char* backend : {"gloo", "shm"}) {
    const auto r =
        ddpbench({"run",          "--scenario",   "tiny_resnet", "--gpus",       "3",
                  "--comparison", "free",         "--modes",     "ddp",          "--steps",
                  "5",            "--batch-size", "12",          "--check-only", "--trace",
                  "--quiet",      "--backend",    backend,       "--out",        path(backend)});
    ASSERT_EQ(r.exit_code, 0) << backend << r.out << r.err;
  }
  const auto d = diff(path("gloo"), path("shm"), "d", 0);
  EXPECT_EQ(d["diverged"], 0) << last_out_;
  EXPECT_EQ(d["class"], "rounding") << last_out_;
  ASSERT_FALSE(d["first_difference"].is_null());
  EXPECT_EQ(d["first_difference"]["step"], 0);
  EXPECT_EQ(d["first_difference"]["phase"], "grad_reduced");
  EXPECT_EQ(d["first_difference"]["class"], "rounding");
  EXPECT_EQ(d["first_difference"]["rounding"]["held_to"], "reduction");
  EXPECT_GT(d["growth"].get<int64_t>(), d["rounding"].get<int64_t>());
}

TEST_F(TraceDiff, OwnEngineAndC10dAndGlooAndShmAreIdenticalAtWorld2) {
  std::vector<std::string> free = {"--comparison", "free", "--modes", "ddp"};
  const std::string own = run("own", free);
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.begin(), free.begin(), free.end());
    return more;
  };
  const std::string c10d = run("c10d", with({"--ddp-impl", "c10d"}));
  const std::string shm = run("shm", with({"--backend", "shm"}));
  EXPECT_EQ(diff(own, c10d, "d1", 0, {"--expect", "identical"})["class"], "identical") << last_out_;
  EXPECT_EQ(diff(own, shm, "d2", 0, {"--expect", "identical"})["class"], "identical") << last_out_;
}

// Refusals are ddpbench's own decisions whatever libtorch it links (the torch_independent label,
// tests/CMakeLists.txt): the Debian suite runs them.
class TraceRefusals : public TraceDiff {};

TEST_F(TraceRefusals, TracesOfDifferentExperimentsAreRefusedNamingTheField) {
  const std::string a = run("a");
  // Named by the field itself, not by the scenario's whole file, which holds the seed too.
  expect_refused(ddpbench({"diff", a, run("seed", {"--seed", "1"}), "--out", path("d1")}),
                 "seed is '0' in A and '1' in B");
  expect_refused(ddpbench({"diff", a, run("batch", {"--batch-size", "8"}), "--out", path("d2")}),
                 "global_batch");
  EXPECT_FALSE(std::filesystem::exists(path("d1")));
  EXPECT_FALSE(std::filesystem::exists(path("d2")));
}

// A TorchScript model is part of the experiment by its content's hash, not its path: the same file
// copied elsewhere (another host's path) diffs, another file is refused.
TEST_F(TraceRefusals, AnotherModelFileIsAnotherExperimentTheSameFileElsewhereIsNot) {
  const std::string models = testing::make_script_test_models();
  std::filesystem::create_directories(path("elsewhere"));
  std::filesystem::copy_file(models + "/mlp.pt", path("elsewhere/mlp.pt"));
  const auto traced = [&](const std::string& name, const std::string& model) {
    const auto r =
        ddpbench({"run", "--scenario", "linear_mse", "--model", model, "--gpus", "2", "--steps",
                  "2", "--check-only", "--trace", "--quiet", "--out", path(name)});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return path(name);
  };
  const std::string a = traced("a", models + "/mlp.pt");
  const auto d = diff(a, traced("moved", path("elsewhere/mlp.pt")), "d1", 0);
  EXPECT_EQ(d["class"], "identical") << last_out_;
  EXPECT_GT(d["compared"].get<int64_t>(), 0);
  // Named `model`, with both files' hashes whole: A's and B's text never read the same.
  const auto other =
      ddpbench({"diff", a, traced("other", models + "/mlp_bn.pt"), "--out", path("d2")});
  expect_refused(other, "model is 'TorchScript sha256:");
  const size_t first = other.err.find("sha256:");
  const size_t second = other.err.find("sha256:", first + 1);
  ASSERT_NE(second, std::string::npos) << other.err;
  EXPECT_NE(other.err.substr(first, 71), other.err.substr(second, 71)) << other.err;
}

TEST_F(TraceRefusals, DamagedSwappedOrMissingTracesAreRefusedNeverJudged) {
  const std::string a = run("a");
  const std::string trace = a + "/trace.pt";
  const auto size = std::filesystem::file_size(trace);
  std::string bytes(size, '\0');
  std::ifstream(trace, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(size));
  // Truncated.
  std::ofstream(path("cut.pt"), std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(size / 2));
  expect_refused(ddpbench({"diff", path("cut.pt"), trace, "--out", path("d1")}), "cut.pt");
  // One byte of a tensor's record changed: the digest no longer matches.
  std::string edited = bytes;
  const size_t at = edited.find("data/0");
  ASSERT_NE(at, std::string::npos);
  edited[at + 200] = static_cast<char>(edited[at + 200] ^ 0x01);
  std::ofstream(path("edited.pt"), std::ios::binary)
      .write(edited.data(), static_cast<std::streamsize>(size));
  const auto r = ddpbench({"diff", path("edited.pt"), trace, "--out", path("d2")});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
  // The run folder's trace replaced by another file: its hash is not the one report.json names.
  const std::string b = run("b", {"--seed", "1"});
  std::filesystem::copy_file(path("edited.pt"), b + "/trace.pt",
                             std::filesystem::copy_options::overwrite_existing);
  expect_refused(ddpbench({"diff", a, b, "--out", path("d3")}), "SHA-256");
  // A run without --trace, and --trace without checked steps.
  const std::string plain = path("plain");
  EXPECT_EQ(ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--steps", "2",
                      "--check-only", "--quiet", "--out", plain})
                .exit_code,
            0);
  expect_refused(ddpbench({"diff", a, plain, "--out", path("d4")}), "--trace");
  expect_refused(
      ddpbench({"run", "--scenario", "toy_cnn", "--perf-only", "--trace", "--out", path("perf")}),
      "--perf-only");
  for (const char* d : {"d1", "d2", "d3", "d4", "perf"}) {
    EXPECT_FALSE(std::filesystem::exists(path(d))) << d;
  }
}

}  // namespace
}  // namespace ddpbench
