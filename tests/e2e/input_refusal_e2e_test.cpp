// input_refusal_e2e_test.cpp — the refusals a second hostile battery found wanting, through the
// real binary: a --data directory reached libstdc++'s "basic_filebuf::underflow" (exit 3), an empty
// --model file reported a stale errno, --zero-stage 1.5 gave no reason, `project` printed numbers
// hundreds of digits long for --alpha-us 1.7e308, and --ddp-impl c10d --comm-hook bf16 advised
// backends c10d refuses; flags that change nothing in the run (an engine without its mode, the
// GradScaler without fp16) were recorded, and the gate refused two runs that computed the same
// thing. Each: exit 2, exactly the one line below, nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;

constexpr const char* kModelFix =
    "pass a TorchScript file saved with torch.jit.script(model).save(FILE)";

class InputRefusal : public testing::TempDirTest {
 protected:
  void expect_line(const std::vector<std::string>& args, const std::string& line) {
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(r.err, "ddpbench: error: " + line + "\n");
    EXPECT_FALSE(fs::exists(path("o")));
  }
};

TEST_F(InputRefusal, ADirectoryOrAnEmptyFileIsNamedForWhatItIs) {
  fs::create_directory(path("dir"));
  std::ofstream(path("empty.pt")).flush();
  const std::string dir = "'" + path("dir") + "'";
  expect_line({"run", "--scenario", "toy_cnn", "--data", path("dir"), "--out", path("o")},
              "--data " + dir +
                  ": it is a directory, not a file; save it with torch.save({\"inputs\": x, "
                  "\"targets\": y}, FILE), x and y with one row per sample");
  expect_line({"run", "--model", path("dir"), "--out", path("o")},
              "--model " + dir + ": it is a directory, not a file; " + kModelFix);
  expect_line({"run", "--model", path("empty.pt"), "--out", path("o")},
              "--model '" + path("empty.pt") + "': it is empty; " + kModelFix);
  expect_line({"run", "--scenario", "toy_cnn", "--resume", path("dir"), "--out", path("o")},
              "--resume " + dir +
                  ": it is a directory, not a file; pass a checkpoint written by `ddpbench run "
                  "--checkpoint-every N` (checkpoint_<mode>_step<N>.pt in its --out)");
}

TEST_F(InputRefusal, AZeroStageThatIsNotOneOfThemSaysWhichAre) {
  expect_line({"run", "--scenario", "toy_cnn", "--zero-stage", "1.5", "--out", path("o")},
              "--zero-stage: '1.5' must be 1, 2 or 3 (the ZeRO stage) (see `ddpbench run "
              "--help`)");
}

TEST_F(InputRefusal, ProjectionLinksAreBounded) {
  expect_line({"project", "--from", path("r.json"), "--alpha-us", "1.7e308", "--out", path("o")},
              "--alpha-us: '1.7e308' must be a number from 0 to 1e+06 (latency in microseconds, "
              "e.g. 5) (see `ddpbench project --help`)");
  expect_line({"project", "--from", path("r.json"), "--link-gbps", "1e-300", "--out", path("o")},
              "--link-gbps: '1e-300' must be a number from 0.001 to 1e+06 (link bandwidth in "
              "Gbit/s, e.g. 100) (see `ddpbench project --help`)");
}

TEST_F(InputRefusal, C10dAdvisesOnlyWhatC10dRuns) {
  expect_line({"run", "--scenario", "toy_cnn", "--ddp-impl", "c10d", "--comm-hook", "bf16", "--out",
               path("o")},
              "--comm-hook bf16 needs a bfloat16 sum, which c10d's ProcessGroupGloo (the only one "
              "--ddp-impl c10d runs on) lacks; use --comm-hook fp16, or --ddp-impl bucketed with "
              "--backend shm or --backend mpi (under mpirun) or --backend nccl");
}

TEST_F(InputRefusal, FlagsThatChangeNothingInTheRunAreRefused) {
  expect_line({"run", "--scenario", "toy_cnn", "--ddp-impl", "c10d", "--modes", "single,dp",
               "--out", path("o")},
              "--ddp-impl c10d only applies to the ddp mode, which this run does not have (modes "
              "single,dp): add ddp to --modes, or drop --ddp-impl");
  expect_line({"run", "--scenario", "toy_cnn", "--static-graph", "--modes", "single,zero", "--out",
               path("o")},
              "--static-graph only applies to the ddp mode, which this run does not have (modes "
              "single,zero): add ddp to --modes, or drop --static-graph");
  expect_line({"run", "--scenario", "toy_cnn", "--amp", "bf16", "--grad-scaler-init", "1024",
               "--out", path("o")},
              "--grad-scaler-init sets the GradScaler of --amp fp16, and this run's --amp is bf16: "
              "add --amp fp16, or drop --grad-scaler-init");
}

}  // namespace
}  // namespace ddpbench
