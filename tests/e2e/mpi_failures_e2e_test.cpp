// mpi_failures_e2e_test.cpp — under mpirun no ddpbench parent watches the ranks, and an MPI
// collective can neither time out nor be cancelled: a rank that crashes or hangs must still end
// the whole job within --timeout (Note [An MPI job ends by MPI_Abort]), exit 3, with a line that
// names the rank to blame and why (crashed; hung, never issuing the collective its peers wait in),
// and leave no process and no output folder. Before, a crashed rank waited forever in the
// collective MPI_Finalize and a hung one in the collective its peers were blocked in. Each case is
// bounded by `timeout`, so a regression fails (exit 124) instead of hanging the suite.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;

class MpiFailures : public testing::TempDirTest {
 protected:
  // toy_cnn under `mpirun -np world` with `fault`, three check steps and --timeout 3 (a hang costs
  // at least that); the whole job is killed after 40 s (exit 124) should it hang.
  testing::ProcessResult mpirun(int world, const std::string& backend, const std::string& fault,
                                const std::string& out) {
    return testing::run_process({"timeout",
                                 "-k",
                                 "5",
                                 "40",
                                 "mpirun",
                                 "--allow-run-as-root",
                                 "--oversubscribe",
                                 "-np",
                                 std::to_string(world),
                                 testing::kDdpbenchBinary,
                                 "run",
                                 "--scenario",
                                 "toy_cnn",
                                 "--modes",
                                 "ddp",
                                 "--check-only",
                                 "--steps",
                                 "3",
                                 "--timeout",
                                 "5",
                                 "--backend",
                                 backend,
                                 "--inject-fault",
                                 fault,
                                 "--out",
                                 out});
  }

  void expect_nothing_left(const std::string& what, const std::string& out) {
    EXPECT_FALSE(fs::exists(out)) << what << ": a failed run left its output folder";
    EXPECT_FALSE(testing::process_alive_with(out)) << what << ": a rank outlived the job";
  }
};

TEST_F(MpiFailures, ACrashedRankEndsTheJobAtOnceNamingItself) {
  for (const std::string backend : {"mpi", "gloo"}) {
    const std::string out = path("crash-" + backend);
    const auto r = mpirun(2, backend, "crash:rank=1,step=1", out);
    EXPECT_EQ(r.exit_code, 3) << backend << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("worker failure: rank 1: injected crash at step 1"), std::string::npos)
        << backend << ": " << r.err;
    expect_nothing_left(backend, out);
  }
}

// The hung rank cannot speak: the ranks waiting for it name it, alive (its heartbeat beats) and
// short of the collective they wait in. mpi's collective is ended by the watchdog, gloo's by its
// own timeout; either way the job is aborted rather than finalized.
TEST_F(MpiFailures, AHungRankIsNamedByThePeersWaitingForIt) {
  struct Case {
    int world;
    std::string backend;
    std::string expect;  // besides the hung rank
  };
  // mpi at world 3 (world 2 is the same with one waiting rank fewer), and gloo, whose hung rank
  // used to be "rank 1 on ? stopped without a word".
  const std::vector<Case> cases = {
      {3, "mpi", "cannot be cancelled, so the MPI job is aborted"},
      {2, "gloo", "a collective failed ("},
  };
  for (const Case& c : cases) {
    const std::string what = c.backend + " at world " + std::to_string(c.world);
    const std::string out = path("hang-" + c.backend + std::to_string(c.world));
    const auto r = mpirun(c.world, c.backend, "hang:rank=1,step=1", out);
    EXPECT_EQ(r.exit_code, 3) << what << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("hung: it is alive but never issued collective #"), std::string::npos)
        << what << ": " << r.err;
    EXPECT_NE(r.err.find("rank 1 on "), std::string::npos) << what << ": " << r.err;
    EXPECT_NE(r.err.find("(it is at check phase step 1 of 3, forward)"), std::string::npos)
        << what << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << what << ": " << r.err;
    // Only rank 1 is to blame: a rank waiting in the collective is not called hung.
    EXPECT_EQ(r.err.find("rank 0 on "), std::string::npos) << what << ": " << r.err;
    EXPECT_EQ(r.err.find("rank 2 on "), std::string::npos) << what << ": " << r.err;
    // It was hung, not silent; and its host is known.
    EXPECT_EQ(r.err.find("without a word"), std::string::npos) << what << ": " << r.err;
    EXPECT_EQ(r.err.find(" on ?"), std::string::npos) << what << ": " << r.err;
    expect_nothing_left(what, out);
  }
}

}  // namespace
}  // namespace ddpbench
