// start_up_e2e_test.cpp — one start-up for every process of a run (run/prepare_run.h): every
// refusal the launching parent makes is made, with the same line and exit 2, by each rank started
// under torchrun-style variables, before any rank joins a rendezvous, and by `scale` before its
// first point; nothing is written. The two start-ups had drifted: ranks under torchrun accepted
// --sync-bn on toy_cnn (no BatchNorm) and said PASS while the parent refused it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;

class StartUp : public testing::TempDirTest {};

// Refusals that need the resolved run, the dataset or the model, none of them device-dependent.
const std::vector<std::vector<std::string>> kRefused = {
    {"--scenario", "toy_cnn", "--modes", "ddp", "--sync-bn"},
    {"--scenario", "linear_mse", "--steps", "3", "--inject-fault", "buffers:rank=1,step=1"},
    {"--scenario", "toy_cnn", "--batch-size", "1"},  // a batch smaller than the ranks
    {"--scenario", "linear_mse", "--data-dir", "."},
    {"--scenario", "toy_cnn", "--backend", "mpi"},
    {"--scenario", "toy_cnn", "--threads", "100000"},
};

TEST_F(StartUp, EveryRankRefusesWhatTheParentRefusesWithTheSameLine) {
  const int port = testing::free_port();
  for (const auto& flags : kRefused) {
    std::vector<std::string> parent_args = {"run", "--gpus", "2",      "--timeout",
                                            "5",   "--out",  path("o")};
    parent_args.insert(parent_args.end(), flags.begin(), flags.end());
    const auto parent = ddpbench(parent_args);
    ASSERT_EQ(parent.exit_code, 2) << flags[1] << ": " << parent.out << parent.err;
    ASSERT_EQ(testing::count_lines(parent.err), 1) << parent.err;
    EXPECT_FALSE(fs::exists(path("o")));

    // Each rank alone: a rank that got past the checks would sit in the rendezvous waiting for
    // its peer until --timeout and exit 3, so a missing check cannot pass by luck.
    std::vector<std::string> rank_args = {"run", "--timeout", "5", "--out", path("o")};
    rank_args.insert(rank_args.end(), flags.begin(), flags.end());
    for (int rank = 0; rank < 2; ++rank) {
      const auto r =
          ddpbench(rank_args, {"RANK=" + std::to_string(rank), "LOCAL_RANK=" + std::to_string(rank),
                               "WORLD_SIZE=2", "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1",
                               "MASTER_PORT=" + std::to_string(port)});
      EXPECT_EQ(r.exit_code, 2) << "rank " << rank << " with " << flags[1] << " " << flags[2]
                                << ": " << r.out << r.err;
      EXPECT_EQ(r.err, parent.err) << "rank " << rank;
      EXPECT_FALSE(fs::exists(path("o"))) << "rank " << rank << " wrote its --out";
    }
  }
}

// The reproduction, as a user types it: both ranks at once, and the run ends at once.
TEST_F(StartUp, TorchrunRanksRefuseSyncBnWithoutBatchNormTogether) {
  const std::string port = std::to_string(testing::free_port());
  std::string command;
  for (int rank = 0; rank < 2; ++rank) {
    command += "RANK=" + std::to_string(rank) + " LOCAL_RANK=" + std::to_string(rank) +
               " WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port + " '" +
               testing::kDdpbenchBinary +
               "' run --scenario toy_cnn --modes ddp --sync-bn --steps 2 --timeout 10 --out '" +
               path("o") + "' & pid" + std::to_string(rank) + "=$!; ";
  }
  command += "wait $pid0; a=$?; wait $pid1; b=$?; echo \"exits $a $b\"";
  const auto r = testing::run_process({"bash", "-c", command});
  EXPECT_NE(r.out.find("exits 2 2"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(testing::count_lines(r.err), 2) << r.err;
  EXPECT_NE(r.err.find("--sync-bn: scenario toy_cnn has no BatchNorm layer to convert"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(path("o")));
}

// `scale` refuses before its first point what every point's `run` would refuse: it said "the K=1
// point failed with exit code 2" and exited 3 after starting that point.
TEST_F(StartUp, ScaleRefusesWhatRunRefusesBeforeAnyPoint) {
  for (const auto& flags : {kRefused[0], kRefused[1]}) {
    std::vector<std::string> args = {"scale", "--gpus", "1,2", "--out", path("o")};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.out.find("scale: K="), std::string::npos) << "a point started: " << r.out;
    EXPECT_FALSE(fs::exists(path("o")));
  }
}

}  // namespace
}  // namespace ddpbench
