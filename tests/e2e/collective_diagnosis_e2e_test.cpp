// collective_diagnosis_e2e_test.cpp — when ranks hang or disagree, the run says which rank, which
// collective and which step (Note [The flight recorder], Note [Fingerprints before
// collectives]): a hung rank at world 3 is named with the collective its peers wait in, within
// the timeout, leaving failure.json alone and no process or shared-memory segment; a desync or a
// shape mismatch is named at its first differing collective, before any reduction under
// --debug-collectives, and even where the backend (shm) reduces mismatched buffers without
// noticing.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;
using testing::read_json;

class CollectiveDiagnosis : public testing::TempDirTest {};

int shm_segments() {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/dev/shm")) {
    n += e.path().filename().string().rfind("ddpbench-", 0) == 0 ? 1 : 0;
  }
  return n;
}

TEST_F(CollectiveDiagnosis, AHungRankAtWorldThreeIsNamedWithTheCollectiveItsPeersWaitIn) {
  const int segments_before = shm_segments();
  const auto start = std::chrono::steady_clock::now();
  const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "3", "--modes", "ddp",
                           "--check-only", "--steps", "4", "--backend", "shm", "--timeout", "6",
                           "--inject-fault", "hang:rank=2,step=2", "--out", path("hang")});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // The hang at step 2 comes after start-up and two steps (a few seconds on a loaded machine).
  EXPECT_LT(seconds, 6 + 20) << "the run did not end within its timeout";
  EXPECT_NE(r.err.find("rank 2 never issued collective #"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at step 2 (check phase step 2 of 4"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ranks 0, 1 waiting in it for"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rank 2's last done: #"), std::string::npos) << r.err;
  ASSERT_EQ(testing::folder_names(path("hang")), testing::kFailureOnlyFolder);
  const auto failure = read_json(path("hang") + "/failure.json");
  EXPECT_EQ(failure.at("exit_code"), 3);
  const auto& c = failure.at("collectives");
  EXPECT_EQ(c.at("verdict"), "never_issued");
  ASSERT_EQ(c.at("ranks").size(), 3u);
  // The ranks waiting in it hold it as issued or waiting; the hung one's ring stops before it.
  const int64_t seq = c.at("sequence").get<int64_t>();
  EXPECT_EQ(c.at("ranks")[2].at("issued").get<int64_t>(), seq);
  EXPECT_EQ(c.at("ranks")[0].at("collectives").back().at("seq").get<int64_t>(), seq);
  EXPECT_NE(c.at("ranks")[0].at("collectives").back().at("state"), "done");
  EXPECT_FALSE(testing::process_alive_with(path("hang"))) << "a worker survived";
  EXPECT_EQ(shm_segments(), segments_before) << "shared-memory segments left in /dev/shm";
}

struct Disagreement {
  std::string fault;
  std::string backend;
  bool debug;
  std::string expect;  // in stderr
};

TEST_F(CollectiveDiagnosis, DesyncAndShapeAreNamedAtTheirFirstDifferingCollective) {
  const std::vector<Disagreement> cases = {
      // gloo refuses the mismatched lengths; the recorder names where.
      {"desync:rank=1,step=1", "gloo", false,
       "flight recorder: the ranks disagree at collective #"},
      // shm reduces them without noticing: the rings, compared after the ranks finish, catch it.
      {"shape:rank=1,step=1", "shm", false,
       "every rank finished, but not the same collectives; flight recorder: the ranks disagree"},
      // --debug-collectives stops every rank before the collective, naming both fingerprints.
      {"shape:rank=1,step=1", "gloo", true, "stopped it before any rank reduced it)"},
      {"desync:rank=1,step=1", "shm", true, "stopped it before any rank reduced it)"},
  };
  for (const Disagreement& d : cases) {
    const std::string dir = path(d.fault.substr(0, d.fault.find(':')) + "-" + d.backend);
    std::vector<std::string> args = {
        "run",       "--scenario",   "toy_cnn",        "--gpus", "2",         "--modes",
        "ddp",       "--check-only", "--steps",        "3",      "--backend", d.backend,
        "--timeout", "10",           "--inject-fault", d.fault,  "--out",     dir};
    if (d.debug) args.push_back("--debug-collectives");
    const auto r = ddpbench(args);
    const std::string what = d.fault + " over " + d.backend + (d.debug ? " (debug)" : "");
    EXPECT_EQ(r.exit_code, 3) << what << ": " << r.out << r.err;
    EXPECT_NE(r.err.find(d.expect), std::string::npos) << what << ": " << r.err;
    EXPECT_NE(r.err.find("rank 1 issued"), std::string::npos) << what << ": " << r.err;
    EXPECT_NE(r.err.find("rank 0 issued"), std::string::npos) << what << ": " << r.err;
    ASSERT_EQ(testing::folder_names(dir), testing::kFailureOnlyFolder) << what;
    const auto c = read_json(dir + "/failure.json").at("collectives");
    EXPECT_EQ(c.at("verdict"), "disagree") << what;
  }
}

TEST_F(CollectiveDiagnosis, FaultsAndTheDebugFlagAreRefusedWhereTheyCannotApply) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--gpus", "1", "--modes", "single,ddp", "--inject-fault", "desync:rank=0,step=0"},
       "this run has one rank"},
      {{"--gpus", "2", "--modes", "single,ddp", "--ddp-impl", "c10d", "--inject-fault",
        "shape:rank=1,step=0"},
       "use --ddp-impl bucketed"},
      {{"--gpus", "2", "--modes", "single,dp", "--debug-collectives"},
       "add ddp or zero to --modes, or drop --debug-collectives"},
      {{"--gpus", "2", "--modes", "single,ddp", "--ddp-impl", "c10d", "--debug-collectives"},
       "use --ddp-impl bucketed, or drop --debug-collectives"},
  };
  for (const auto& [flags, expect] : cases) {
    std::vector<std::string> args = {"run", "--scenario", "toy_cnn",      "--steps",
                                     "2",   "--out",      path("refused")};
    args.insert(args.end(), flags.begin(), flags.end());
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(expect), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("refused")));
  }
}

}  // namespace
}  // namespace ddpbench
