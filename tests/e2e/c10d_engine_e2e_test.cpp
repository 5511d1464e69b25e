// c10d_engine_e2e_test.cpp — `--ddp-impl c10d` (PyTorch's own Reducer driven by ddpbench) through
// the real binary: against Python's DistributedDataParallel on the same batches
// (reference/torch_ddp_oracle.py, in each suite's torch: 1.13 and 2.11), judged by the same checks
// as ddpbench's engines (a static graph averages its first iteration, an fp16 hook changes the
// bits, a gradient fault fails), refused where it has no meaning, and kept apart by the gate.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;

class C10dEngine : public testing::TempDirTest {
 protected:
  // ddpbench --ddp-impl c10d, free-running DDP only, with exported batches; then the oracle
  // checks its state with |ddpbench - torch| <= atol + rtol |torch|. Returns the oracle's result.
  testing::ProcessResult against_python_ddp(const std::string& name, std::vector<std::string> args,
                                            const std::string& atol, const std::string& rtol) {
    const std::string dir = path(name);
    args.insert(args.begin(), "run");
    args.insert(args.end(), {"--ddp-impl", "c10d", "--modes", "ddp", "--check-only", "--eval-size",
                             "0", "--export-batches", "--out", dir});
    const auto r = testing::ddpbench(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return testing::python({testing::oracle("torch_ddp_oracle.py"), "--batches",
                            dir + "/batches.pt", "--check", dir + "/state_ddp.pt", "--atol", atol,
                            "--rtol", rtol});
  }
};

// The three workloads in float64 at worlds 2 and 3: the same Reducer, the same batches, the
// same construction and per-step calls as Python's DDP agree to 1e-12 (measured: bitwise). One
// test per workload, so that ctest runs them side by side.
class C10dFloat64 : public C10dEngine {
 protected:
  void expect_agreement(const std::vector<std::string>& workload) {
    for (const char* k : {"2", "3"}) {
      std::vector<std::string> args = workload;
      args.insert(args.end(), {"--gpus", k, "--dtype", "float64"});
      const auto o = against_python_ddp(workload[1] + k, args, "1e-12", "0");
      EXPECT_EQ(o.exit_code, 0) << workload[1] << " K=" << k << "\n" << o.out << o.err;
    }
  }
};

TEST_F(C10dFloat64, CifarResNet18AgreesWithPythonDdpAtWorldsTwoAndThree) {
  expect_agreement({"--scenario", "cifar_resnet18", "--steps", "2", "--batch-size", "6"});
}

TEST_F(C10dFloat64, ImdbGcnnWithAdamAgreesWithPythonDdpAtWorldsTwoAndThree) {
  expect_agreement({"--scenario", "imdb_gcnn", "--steps", "2", "--batch-size", "6"});
}

TEST_F(C10dFloat64, UnusedParamsAgreesWithPythonDdpAtWorldsTwoAndThree) {
  expect_agreement({"--scenario", "unused_params", "--steps", "3", "--batch-size", "6",
                    "--find-unused-parameters"});
}

// float32 at world 2: c10d's arithmetic is PyTorch's own, so the state is bit for bit Python's
// (tiny_resnet: ResNet's layout and BatchNorm buffers, broadcast before every forward).
TEST_F(C10dEngine, Float32IsBitwisePythonDdpAtWorldTwo) {
  const auto o = against_python_ddp(
      "f32", {"--scenario", "tiny_resnet", "--gpus", "2", "--steps", "3", "--batch-size", "8"}, "0",
      "0");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
}

// The fp16 compression hook is applied: bit for bit Python's fp16_compress_hook, and not the
// plain allreduce's bits.
TEST_F(C10dEngine, Fp16HookIsAppliedAsPythonsHook) {
  const auto o = against_python_ddp("fp16",
                                    {"--scenario", "toy_cnn", "--gpus", "2", "--steps", "2",
                                     "--batch-size", "8", "--comm-hook", "fp16"},
                                    "0", "0");
  EXPECT_EQ(o.exit_code, 0) << o.out << o.err;
  // The plain allreduce on the same batches computes other bits.
  const auto plain =
      testing::ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "2",
                         "--batch-size", "8", "--ddp-impl", "c10d", "--modes", "ddp",
                         "--check-only", "--eval-size", "0", "--out", path("plain")});
  ASSERT_EQ(plain.exit_code, 0) << plain.out << plain.err;
  const auto differs =
      testing::python({"-c",
                       "import sys, torch\n"
                       "a, b = (torch.load(p) for p in sys.argv[1:3])\n"
                       "sys.exit(0 if any(not torch.equal(a[k], b[k]) for k in a) else 1)",
                       path("fp16") + "/state_ddp.pt", path("plain") + "/state_ddp.pt"});
  EXPECT_EQ(differs.exit_code, 0) << "fp16 and allreduce states are equal\n" << differs.err;
  // Against single-device training the check passes and names fp16 compression as the cause.
  const auto r = testing::ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "2",
                                    "--modes", "single,ddp", "--check-only", "--ddp-impl", "c10d",
                                    "--comm-hook", "fp16", "--out", path("fp16_judged")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("fp16"), std::string::npos) << r.out;
}

// Static graph: without what Python's _DDPSink does on the first iteration (delay_all_reduce at
// the end of backward) c10d never averages that iteration's gradients and nothing complains.
// Step 0's gradients are judged against single-device training, so that silence would FAIL here.
TEST_F(C10dEngine, StaticGraphAveragesTheFirstIteration) {
  const auto r = testing::ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "3",
                                    "--modes", "single,ddp", "--check-only", "--ddp-impl", "c10d",
                                    "--static-graph", "--out", path("static")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = testing::read_json(path("static") + "/report.json");
  EXPECT_EQ(testing::find_check(report, "ddp", "gradients").at("status"), "pass") << r.out;
  // The Reducer's allreduces pass ddpbench's communicator by, and are counted all the same: the
  // used-parameter map's and one bucket's in the first iteration, one per bucket after.
  const auto counted = testing::find_check(report, "ddp", "collectives");
  EXPECT_EQ(counted.at("status"), "pass") << counted.dump();
  EXPECT_NE(counted.at("detail").get<std::string>().find("PyTorch's Reducer"), std::string::npos)
      << counted.dump();
  EXPECT_EQ(report.at("results")[1].at("collectives").size(), 3u);
}

// Every rank's Reducer skipping its last bucket's allreduce (the bucket fault, through an allreduce
// hook): the gradients and the collectives check FAIL.
TEST_F(C10dEngine, ASkippedBucketFailsTheGradientsAndTheCount) {
  const auto r = testing::ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "2",
                                    "--modes", "single,ddp", "--check-only", "--ddp-impl", "c10d",
                                    "--inject-fault", "bucket:step=1", "--out", path("skipped")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto report = testing::read_json(path("skipped") + "/report.json");
  EXPECT_EQ(testing::find_check(report, "ddp", "gradients").at("status"), "fail") << r.out;
  const auto counted = testing::find_check(report, "ddp", "collectives");
  EXPECT_EQ(counted.at("status"), "fail") << counted.dump();
  EXPECT_EQ(counted.at("step"), 1) << counted.dump();
}

// One rank's gradient corrupted before c10d's Reducer reads it: the run must FAIL, naming it.
TEST_F(C10dEngine, AGradientFaultFails) {
  const auto r =
      testing::ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "2", "--modes",
                         "single,ddp", "--check-only", "--ddp-impl", "c10d", "--inject-fault",
                         "grad:rank=1,step=0,eps=1e-2", "--out", path("fault")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto report = testing::read_json(path("fault") + "/report.json");
  EXPECT_EQ(testing::find_check(report, "ddp", "gradients").at("status"), "fail") << r.out;
}

TEST_F(C10dEngine, OptionsWithoutMeaningAreRefused) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--static-graph"}, "--static-graph"},
      {{"--gradient-as-bucket-view", "--ddp-impl", "naive"}, "--gradient-as-bucket-view"},
      {{"--ddp-impl", "c10d", "--backend", "shm"}, "--backend shm"},
      {{"--ddp-impl", "c10d", "--batch-size", "7", "--steps", "8", "--find-unused-parameters"},
       "drop --find-unused-parameters"},
      {{"--ddp-impl", "c10d", "--comm-hook", "fp16", "--inject-fault", "bucket:step=1"},
       "drop --comm-hook"}};
  for (const auto& [extra, named] : cases) {
    std::vector<std::string> args = {"run", "--scenario", "linear_mse",   "--gpus",
                                     "2",   "--out",      path("refused")};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = testing::ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << named << "\n" << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("refused"))) << named;
  }
}

// The report names the engine, and the gate will not compare two engines' runs.
TEST_F(C10dEngine, TheGateRefusesToCompareEngines) {
  for (const char* impl : {"bucketed", "c10d"}) {
    const auto r = testing::ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--steps",
                                      "3", "--ddp-impl", impl, "--out", path(impl)});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  const auto doc = testing::read_json(path("c10d") + "/report.json");
  EXPECT_EQ(doc["config"]["ddp"]["impl"], "c10d");
  const auto g = testing::ddpbench({"gate", "--baseline", path("bucketed") + "/report.json",
                                    "--current", path("c10d") + "/report.json"});
  EXPECT_EQ(g.exit_code, 2) << g.out << g.err;
  EXPECT_NE(g.err.find("impl"), std::string::npos) << g.err;
}

}  // namespace
}  // namespace ddpbench
