// collective_diagnosis_e2e_test.cpp — when ranks hang or disagree, the run says which rank, which
// collective and which step (Note [The flight recorder], Note [Fingerprints before
// collectives]): a hung rank at world 3 is named with the collective its peers wait in, within
// the timeout, leaving failure.json alone and no process or shared-memory segment; a desync or a
// shape mismatch is named at its first differing collective, before any reduction under
// --debug-collectives, and even where the backend (shm) reduces mismatched buffers without
// noticing (shm; MPI under mpirun), with the step the rank failed in; a c10d run is not said to
// have stopped outside collectives its recorder cannot see; and a slow rank is named the
// straggler with what it cost.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;
using testing::read_json;

class CollectiveDiagnosis : public testing::TempDirTest {};

TEST_F(CollectiveDiagnosis, AHungRankAtWorldThreeIsNamedWithTheCollectiveItsPeersWaitIn) {
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
  EXPECT_EQ(testing::shm_segments_of(r.pid), 0) << "shared-memory segments left in /dev/shm";
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
    // Issue 73: the headline's step is the flight recorder's, the fault's step 1. The parent
    // named the phase it had last polled, often a step or several phases before the one the rank
    // failed in ("at check phase step 0 of 3, forward": step 0 in 8 of 10 gloo runs).
    const size_t at = r.err.find(" at check phase step ");
    if (at != std::string::npos) {
      EXPECT_EQ(r.err.substr(at, 27), " at check phase step 1 of 3") << what << ": " << r.err;
    }
    ASSERT_EQ(testing::folder_names(dir), testing::kFailureOnlyFolder) << what;
    const auto c = read_json(dir + "/failure.json").at("collectives");
    EXPECT_EQ(c.at("verdict"), "disagree") << what;
  }
}

// Issue 73: c10d's Reducer issues its collectives past the flight recorder, so a group whose
// recorded collectives are all done may well be in one of the Reducer's: the analysis says so
// instead of "the ranks stopped outside collectives".
TEST_F(CollectiveDiagnosis, UnderC10dTheAnalysisSaysTheReducersCollectivesAreNotRecorded) {
  const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "2", "--modes", "ddp",
                           "--ddp-impl", "c10d", "--check-only", "--steps", "3", "--inject-fault",
                           "crash:rank=1,step=1", "--out", path("c10d")});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("rank 1 exited with code 3 at check phase step 1 of 3"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("flight recorder: every rank's last recorded collective, #"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("where the ranks stopped is not known: c10d's Reducer issues its "
                       "collectives on its process group, which the flight recorder does not see"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("stopped outside collectives"), std::string::npos) << r.err;
}

// Under mpirun no parent reads the rings: the ranks compare them after their modes, and MPI, which
// reduces mismatched lengths without an error, no longer yields a report of wrong numbers.
TEST_F(CollectiveDiagnosis, RanksUnderMpirunCompareTheirRingsThemselves) {
  const auto r = testing::run_process({"mpirun",
                                       "--allow-run-as-root",
                                       "--oversubscribe",
                                       "-np",
                                       "2",
                                       testing::kDdpbenchBinary,
                                       "run",
                                       "--scenario",
                                       "toy_cnn",
                                       "--backend",
                                       "mpi",
                                       "--modes",
                                       "ddp",
                                       "--check-only",
                                       "--steps",
                                       "3",
                                       "--inject-fault",
                                       "shape:rank=1,step=1",
                                       "--out",
                                       path("mpi")});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("every rank finished, but not the same collectives; flight recorder: the "
                       "ranks disagree at collective #"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("rank 1 issued allreduce"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("mpi")));
}

// Per Note [Stragglers], a rank slowed by M ms per step is named, with what it cost the others (on
// 3 ranks over 2 cores its busy wait also slows a peer, so the cost reads below M:
// reports/METRICS.md, "Hangs, desyncs and stragglers"); `report` recomputes the finding and refuses
// an edited one.
TEST_F(CollectiveDiagnosis, ASlowRankIsNamedTheStragglerWithWhatItCost) {
  const auto r = ddpbench({"run", "--scenario", "toy_cnn", "--gpus", "3", "--batch-size", "18",
                           "--modes", "ddp", "--perf-only", "--steps", "12", "--inject-fault",
                           "slow:rank=1,ms=30", "--out", path("slow")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ddp (world 3): rank 1 is the straggler"), std::string::npos) << r.out;
  auto report = read_json(path("slow") + "/report.json");
  const auto& t = report.at("results")[0].at("throughput");
  ASSERT_EQ(t.at("ranks").size(), 3u);
  EXPECT_EQ(t.at("ranks")[1].at("compute_s").size(), 12u);
  const auto& s = t.at("straggler");
  EXPECT_EQ(s.at("rank"), 1);
  EXPECT_GT(s.at("cost_s").get<double>(), 0.5 * 0.030) << s.dump();
  EXPECT_LT(s.at("cost_s").get<double>(), 1.2 * 0.030) << s.dump();
  std::ifstream html(path("slow") + "/report.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("Ranks: who the others wait for"), std::string::npos);
  EXPECT_NE(page.find("stroke=\"#d62728\""), std::string::npos) << "the straggler's outline";

  // An edited verdict is not believed: the report's own rank timings say otherwise.
  report.at("results")[0].at("throughput").at("straggler").at("rank") = 0;
  std::ofstream(path("edited.json")) << report.dump();
  const auto edited = ddpbench({"report", path("edited.json"), "--out", path("edited")});
  EXPECT_EQ(edited.exit_code, 2) << edited.err;
  EXPECT_NE(edited.err.find("straggler"), std::string::npos) << edited.err;
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
