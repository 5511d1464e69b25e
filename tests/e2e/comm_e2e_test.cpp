// comm_e2e_test.cpp — `ddpbench comm` through the real binary: gloo ranks spawned by ddpbench give
// an nccl-tests table, comm.json and comm.csv, an OK footer and exit 0; a corrupted element on one
// rank (--inject-fault corrupt) shows in #wrong, the FAILED footer and exit 1; bad flags exit 2
// with one line and write nothing.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;

class Comm : public testing::TempDirTest {};

std::vector<std::string> small_sweep(const std::string& out) {
  return {"comm", "--gpus",  "2", "--min-bytes", "8", "--max-bytes", "64K", "--step-factor",
          "16",   "--iters", "2", "--warmup",    "1", "--out",       out};
}

TEST_F(Comm, GlooSweepIsExactAndReported) {
  const auto r = ddpbench(small_sweep(path("o")));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* column : {"size(B)", "count", "time(us)", "algbw", "busbw", "#wrong"}) {
    EXPECT_NE(r.out.find(column), std::string::npos) << column << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("# memcpy, 1 thread, 32768 B:"), std::string::npos) << r.out;
  // gloo's reduce-scatter is its own (comm/gloo_reduce_scatter.h), not an allreduce.
  EXPECT_EQ(r.out.find("is emulated"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# OK:"), std::string::npos) << r.out;
  const nlohmann::json j = testing::read_json(path("o/comm.json"));
  EXPECT_EQ(j["backend"], "gloo");
  EXPECT_EQ(j["world_size"], 2);
  EXPECT_EQ(j["passed"], true);
  // 8, 128, 2048, 32768 B for each of the 4 collectives.
  ASSERT_EQ(j["rows"].size(), 16u);
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["wrong"], 0) << row;
    EXPECT_GT(row["busbw_gb_s"].get<double>(), 0) << row;
  }
  EXPECT_EQ(j["allreduce_busbw_to_memcpy"]["size_bytes"], 32768);
  EXPECT_TRUE(fs::exists(path("o/comm.csv")));
}

// The FAIL path: rank 1 changes one element of every allreduce result of the check pass.
TEST_F(Comm, AWrongElementOnOneRankFailsTheRun) {
  std::vector<std::string> args = small_sweep(path("o"));
  args.insert(args.end(), {"--collectives", "allreduce,allgather", "--inject-fault",
                           "corrupt:rank=1,collective=allreduce"});
  const auto r = ddpbench(args);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("# FAILED: 4 wrong elements in 4 of 8 checked collective calls"),
            std::string::npos)
      << r.out;
  const nlohmann::json j = testing::read_json(path("o/comm.json"));
  EXPECT_EQ(j["passed"], false);
  EXPECT_EQ(j["wrong"], 4);
  for (const auto& row : j["rows"]) {
    EXPECT_EQ(row["wrong"], row["collective"] == "allreduce" ? 1 : 0) << row;
  }
}

TEST_F(Comm, BadFlagsAreOneLineExitTwoAndWriteNothing) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--max-bytes", "12X"}, "--max-bytes"},
      {{"--min-bytes", "1M", "--max-bytes", "1K"}, "--min-bytes"},
      {{"--step-factor", "1"}, "--step-factor"},
      {{"--iters", "0"}, "--iters"},
      {{"--collectives", "alltoall"}, "alltoall"},
      {{"--backend", "mpi"}, "mpirun"},
      {{"--backend", "tcp"}, "--backend"},
      {{"--device", "cuda"}, "--device cuda"},
      {{"--inject-fault", "corrupt:rank=5"}, "rank 5"},
      {{"--dtype", "float16"}, "--dtype"},
      {{"--max-bytes", "4G"}, "2G"}};
  for (const auto& [flags, named] : cases) {
    std::vector<std::string> args = {"comm", "--out", path("o")};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << named << ": " << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("o"))) << named;
  }
}

}  // namespace
}  // namespace ddpbench
