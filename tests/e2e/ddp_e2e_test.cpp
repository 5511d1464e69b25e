// ddp_e2e_test.cpp — `ddpbench run --gpus K` end to end: DDP agrees with single-device training
// where it must (linear_mse, the seed notebook's claim; toy_cnn in float32 and float64), judges
// BatchNorm without SyncBN against the exact reference, holds each reduction to one all-reduce
// per bucket, and proves it can fail: gradient and bucket faults give exit 1 naming the tensor or
// collective and step; crash, hang and NaN give exit 3 naming the rank, leaving no process
// behind.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;
using testing::find_check;
using testing::read_json;

class DdpE2E : public testing::TempDirTest {};


TEST_F(DdpE2E, LinearMseOnFourRanksMatchesSingleDeviceAndTheNotebook) {
  const auto r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "4", "--out", path("lin")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("running 4 CPU rank(s) over gloo"), std::string::npos) << r.out;
  const auto report = read_json(path("lin") + "/report.json");
  EXPECT_TRUE(report.at("passed").get<bool>());
  // float32: lockstep, so each step's update is judged rather than the final parameters.
  for (const char* check : {"loss", "gradients", "updates", "ranks_bitwise_equal"}) {
    EXPECT_EQ(find_check(report, "ddp", check).at("status"), "pass") << check;
  }
  // The notebook's claim: DDP's weights are PyTorch's single-device weights.
  const auto py = testing::python({testing::oracle("linear_mse_oracle.py"), "--check",
                                   path("lin") + "/state_ddp.pt", "--atol", "1e-6"});
  EXPECT_EQ(py.exit_code, 0) << py.out << py.err;
}

TEST_F(DdpE2E, ThroughputCountsTheSamplesProcessedNotTheBatchAskedFor) {
  // 20 samples, a global batch of 40: every step processes the 20 there are.
  const auto r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--batch-size", "40",
                           "--steps", "2", "--quiet", "--out", path("small")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("small") + "/report.json");
  for (const auto& result : report.at("results")) {
    const auto& t = result.at("throughput");
    EXPECT_DOUBLE_EQ(t.at("samples_per_step").get<double>(), 20.0) << result.at("mode");
  }
}

TEST_F(DdpE2E, PerfPhaseReportsThroughputPhasesAndScaling) {
  const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "5",
                           "--warmup", "1", "--out", path("perf")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("perf") + "/report.json");
  const auto& single = report.at("results")[0];
  const auto& ddp = report.at("results")[1];
  EXPECT_EQ(single.at("throughput").at("samples_per_step"), 8) << "weak scaling: 16 / 2 ranks";
  const auto& t = ddp.at("throughput");
  EXPECT_EQ(t.at("timed_steps"), 5);
  EXPECT_EQ(t.at("warmup_steps"), 1);
  EXPECT_GT(t.at("samples_per_s").get<double>(), 0);
  EXPECT_LE(t.at("step_time_p50_s").get<double>(), t.at("step_time_p99_s").get<double>());
  EXPECT_GT(t.at("bytes_allreduced_per_step").get<int64_t>(), 62006 * 4 - 1);
  EXPECT_GT(t.at("phases").at("backward_s").get<double>(), 0);
  EXPECT_GT(ddp.at("scaling_efficiency").get<double>(), 0);
  EXPECT_EQ(ddp.at("scaling"), "weak");

  // --check-only: no perf phase; --perf-only: no checks and no state files.
  ASSERT_EQ(ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--check-only", "--out",
                      path("check")})
                .exit_code,
            0);
  EXPECT_EQ(
      read_json(path("check") + "/report.json").at("results")[1].at("throughput").at("timed_steps"),
      0);
  ASSERT_EQ(ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--perf-only", "--out",
                      path("perfonly")})
                .exit_code,
            0);
  const auto perf_only = read_json(path("perfonly") + "/report.json");
  EXPECT_TRUE(perf_only.at("results")[1].at("checks").empty());
  EXPECT_FALSE(fs::exists(path("perfonly") + "/state_ddp.pt"));
}

TEST_F(DdpE2E, ToyCnnFloat64AgreesToRounding) {
  const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "6", "--dtype",
                           "float64", "--out", path("f64")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("f64") + "/report.json");
  EXPECT_LT(find_check(report, "ddp", "parameters").at("max_abs_diff").get<double>(), 1e-12);
  EXPECT_LT(find_check(report, "ddp", "gradients").at("max_abs_diff").get<double>(), 1e-12);
}

// The shm backend: the same agreement in float64 across several buckets on three ranks, a
// corrupted gradient still caught, a crash still named, and /dev/shm left as it was.
TEST_F(DdpE2E, SharedMemoryBackendAgreesCatchesAndCleansUp) {
  const auto ok = ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "3", "--batch-size", "18",
                            "--steps", "4", "--dtype", "float64", "--bucket-cap-mb", "0.1",
                            "--first-bucket-mb", "0.01", "--backend", "shm", "--out", path("shm")});
  ASSERT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  const auto report = read_json(path("shm") + "/report.json");
  EXPECT_EQ(report.at("results")[1].at("backend"), "shm");
  EXPECT_GT(report.at("results")[1].at("buckets").get<int>(), 1);
  EXPECT_LT(find_check(report, "ddp", "gradients").at("max_abs_diff").get<double>(), 1e-12);
  const auto bad =
      ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "3", "--backend", "shm",
                "--inject-fault", "grad:rank=1,step=1", "--out", path("shm-grad")});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  const auto crash = ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "5",
                               "--timeout", "8", "--backend", "shm", "--inject-fault",
                               "crash:rank=1,step=2", "--out", path("shm-crash")});
  EXPECT_EQ(crash.exit_code, 3) << crash.err;
  EXPECT_NE(crash.err.find("rank 1"), std::string::npos) << crash.err;
  EXPECT_EQ(testing::folder_names(path("shm-crash")), testing::kFailureOnlyFolder);
  for (const auto* run : {&ok, &bad, &crash}) {
    EXPECT_EQ(testing::shm_segments_of(run->pid), 0) << "shared-memory segments left in /dev/shm";
  }
}

// The naive engine agrees too, and is held to one all-reduce per parameter some rank used: the
// bucket fault skips its last parameter's and fails the collectives check.
TEST_F(DdpE2E, NaiveStrategyAndSmallBucketsAgreeToo) {
  const std::vector<std::string> naive_run = {"run",        "--scenario", "toy_cnn", "--gpus", "2",
                                              "--steps",    "4",          "--ddp-impl", "naive"};
  auto good = naive_run;
  good.insert(good.end(), {"--out", path("naive")});
  const auto naive = ddpbench(good);
  ASSERT_EQ(naive.exit_code, 0) << naive.out << naive.err;
  const auto report = read_json(path("naive") + "/report.json");
  EXPECT_EQ(report.at("results")[1].at("buckets"), 0);
  const auto counted = find_check(report, "ddp", "collectives");
  EXPECT_EQ(counted.at("status"), "pass");
  EXPECT_NE(counted.at("detail").get<std::string>().find("one allreduce per parameter"),
            std::string::npos)
      << counted.dump();
  auto bad = naive_run;
  bad.insert(bad.end(), {"--inject-fault", "bucket:step=1", "--out", path("skipped")});
  const auto skipped = ddpbench(bad);
  EXPECT_EQ(skipped.exit_code, 1) << skipped.out << skipped.err;
  const auto faulty = read_json(path("skipped") + "/report.json");
  EXPECT_EQ(find_check(faulty, "ddp", "collectives").at("status"), "fail");
  EXPECT_EQ(find_check(faulty, "ddp", "gradients").at("status"), "fail");
  const auto small =
      ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "3", "--batch-size", "18", "--steps", "4",
                "--bucket-cap-mb", "0.01", "--first-bucket-mb", "0.001", "--out", path("small")});
  ASSERT_EQ(small.exit_code, 0) << small.out << small.err;
  EXPECT_GT(read_json(path("small") + "/report.json").at("results")[1].at("buckets").get<int>(), 3);
}

TEST_F(DdpE2E, BatchNormWithoutSyncBnIsJudgedAgainstTheExactReference) {
  const auto r = ddpbench({"run", "--scenario", "tiny_resnet", "--gpus", "2", "--steps", "2",
                           "--batch-size", "8", "--dtype", "float64", "--grad-check", "fingerprint",
                           "--out", path("bn")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto report = read_json(path("bn") + "/report.json");
  for (const char* check : {"loss", "gradients", "parameters", "buffers", "ranks_bitwise_equal"}) {
    EXPECT_EQ(find_check(report, "ddp", check).at("status"), "pass") << check;
  }
  const auto& reference = report.at("results")[1].at("reference");
  EXPECT_NE(reference.at("causes")[0].get<std::string>().find("BatchNorm without SyncBN"),
            std::string::npos);
  EXPECT_GT(reference.at("loss_diff").get<double>(), 0.0) << "the size must be measured";
  EXPECT_NE(r.out.find("BatchNorm without SyncBN moves the loss by"), std::string::npos) << r.out;
  EXPECT_EQ(report.at("results")[1].at("gradient_check"), "fingerprint");
}

TEST_F(DdpE2E, GradientFaultFailsInFloat32AtTheDefaultEps) {
  const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "6",
                           "--inject-fault", "grad:rank=1,step=3", "--out", path("g32")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL"), std::string::npos);
  const auto g = find_check(read_json(path("g32") + "/report.json"), "ddp", "gradients");
  EXPECT_EQ(g.at("status"), "fail");
  EXPECT_EQ(g.at("tensor"), "conv1.weight");
  EXPECT_EQ(g.at("step"), 3);
}

TEST_F(DdpE2E, GradientFaultFailsInFloat64AtEps1e9) {
  const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "4", "--dtype",
                           "float64", "--inject-fault",
                           "grad:rank=0,step=2,eps=1e-9,tensor=fc2.bias", "--out", path("g64")});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto g = find_check(read_json(path("g64") + "/report.json"), "ddp", "gradients");
  EXPECT_EQ(g.at("tensor"), "fc2.bias");
  EXPECT_EQ(g.at("step"), 2);
}

// The collectives check holds each step's reduction to one all-reduce per bucket it used: one
// bucket in tiny_resnet's first step, two once DDP rebuilt them. Every rank skipping its last
// bucket's all-reduce (the bucket fault) fails it, and the gradients too.
TEST_F(DdpE2E, EachReductionIssuesOneAllreducePerBucketItUsed) {
  const std::vector<std::string> run = {"run", "--scenario",  "tiny_resnet", "--gpus",
                                        "2",   "--modes",     "single,ddp",  "--steps",
                                        "3",   "--check-only"};
  auto good = run;
  good.insert(good.end(), {"--out", path("buckets")});
  const auto r = ddpbench(good);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto c = find_check(read_json(path("buckets") + "/report.json"), "ddp", "collectives");
  EXPECT_EQ(c.at("status"), "pass");
  EXPECT_NE(c.at("detail").get<std::string>().find("1, 2, 2 (by step)"), std::string::npos)
      << c.dump();
  auto bad = run;
  bad.insert(bad.end(), {"--inject-fault", "bucket:step=1", "--out", path("skipped")});
  const auto f = ddpbench(bad);
  EXPECT_EQ(f.exit_code, 1) << f.out << f.err;
  const auto report = read_json(path("skipped") + "/report.json");
  const auto skipped = find_check(report, "ddp", "collectives");
  EXPECT_EQ(skipped.at("status"), "fail");
  EXPECT_EQ(skipped.at("step"), 1);
  EXPECT_NE(skipped.at("detail").get<std::string>().find("issued 1 all-reduce(s)"),
            std::string::npos)
      << skipped.dump();
  EXPECT_EQ(find_check(report, "ddp", "gradients").at("status"), "fail");
}

struct WorkerFault {
  std::string spec;
  std::string expect;
};

TEST_F(DdpE2E, CrashHangAndNanStopTheRunNamingTheRank) {
  const std::vector<WorkerFault> faults = {
      // The step is named within its phase ("step 284" of a 200-step run said neither).
      {"crash:rank=1,step=2", "at check phase step 2 of 5"},
      {"nan:rank=1,step=1", "non-finite loss"},
      {"hang:rank=1,step=2", "rank 1 (last seen at check phase step 2 of 5"},
  };
  for (const auto& f : faults) {
    const std::string dir = path("fault-" + f.spec.substr(0, f.spec.find(':')));
    const auto start = std::chrono::steady_clock::now();
    const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--steps", "5",
                             "--timeout", "8", "--inject-fault", f.spec, "--out", dir});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.exit_code, 3) << f.spec << ": " << r.err;
    EXPECT_NE(r.err.find(f.expect), std::string::npos) << f.spec << ": " << r.err;
    EXPECT_NE(r.err.find("step"), std::string::npos) << f.spec << ": " << r.err;
    EXPECT_LT(seconds, 60) << f.spec << " did not end within its timeout";
    // One complete file says why (Note [The flight recorder]); nothing half-written.
    EXPECT_EQ(testing::folder_names(dir), testing::kFailureOnlyFolder) << f.spec;
    EXPECT_NE(r.err.find("flight recorder: "), std::string::npos) << f.spec << ": " << r.err;
    EXPECT_FALSE(testing::process_alive_with(dir)) << f.spec << ": a worker survived";
  }
}

TEST_F(DdpE2E, BadDdpInputIsExitTwo) {
  const std::string o = path("bad");
  const std::vector<std::vector<std::string>> cases = {
      {"run", "--scenario", "toy_cnn", "--gpus", "2", "--inject-fault", "grad:rank=2,step=0"},
      {"run", "--scenario", "toy_cnn", "--modes", "single", "--inject-fault",
       "crash:rank=0,step=0"},
      {"run", "--scenario", "toy_cnn", "--gpus", "3", "--batch-size", "2"},  // a rank gets none
      {"run", "--scenario", "toy_cnn", "--gpus", "2", "--backend", "mpi"},
      {"run", "--scenario", "toy_cnn", "--gpus", "2", "--backend", "nccl"},
      {"run", "--scenario", "toy_cnn", "--gpus", "2", "--comm-hook", "bf16"},
      {"run", "--scenario", "toy_cnn", "--gpus", "2", "--inject-fault", "grad:rank=one"},
      {"run", "--scenario", "toy_cnn", "--gpus", "0"},
  };
  for (auto args : cases) {
    args.insert(args.end(), {"--out", o});
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << args[4] << ": " << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_FALSE(fs::exists(o));
  }
}

// Rank 0's result (ResNet-18's final state, 45 MB) is over the 8 MiB a PyTorch 2.x TCPStore takes
// (comm/store.h refuses it on every libtorch): it reaches the parent through the result file.
TEST_F(DdpE2E, ARankResultOverTheStoreLimitStillArrives) {
  const auto r =
      ddpbench({"run", "--scenario", "cifar_resnet18", "--gpus", "2", "--modes", "single,ddp",
                "--steps", "1", "--batch-size", "8", "--check-only", "--out", path("big")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_GT(fs::file_size(path("big") + "/state_ddp.pt"), uintmax_t{8} << 20);
}

}  // namespace
}  // namespace ddpbench
