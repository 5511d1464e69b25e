// launchers_e2e_test.cpp — ddpbench joining worlds it did not spawn: torchrun-style variables and
// Slurm variables set by hand on two processes started here, a real torchrun (the oracle Python's,
// as launchers/ starts it: --no_python, static and c10d rendezvous) and a real `mpirun -np 2` with
// the gloo backend (rendezvous shared through MPI) and with the MPI backend.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::find_check;
using testing::read_json;

class Launchers : public testing::TempDirTest {
 protected:
  // Starts one ddpbench per environment at once and waits for all.
  static std::vector<testing::ProcessResult> run_world(
      const std::vector<std::string>& args, const std::vector<std::vector<std::string>>& envs) {
    std::vector<std::future<testing::ProcessResult>> running;
    for (const auto& env : envs) {
      running.push_back(
          std::async(std::launch::async, [&args, env] { return testing::ddpbench(args, env); }));
    }
    std::vector<testing::ProcessResult> results;
    for (auto& f : running) results.push_back(f.get());
    return results;
  }

  void expect_passing_report(const std::string& dir) {
    const auto report = read_json(dir + "/report.json");
    EXPECT_TRUE(report.at("passed").get<bool>());
    EXPECT_EQ(report.at("config").at("world_size"), 2);
    EXPECT_EQ(find_check(report, "ddp", "gradients").at("status"), "pass");
  }
};

TEST_F(Launchers, TorchrunVariablesByHand) {
  const std::string dir = tmp_ + "/torchrun";
  const std::string port = std::to_string(testing::free_port());
  std::vector<std::vector<std::string>> envs;
  for (int r = 0; r < 2; ++r) {
    envs.push_back({"RANK=" + std::to_string(r), "LOCAL_RANK=" + std::to_string(r), "WORLD_SIZE=2",
                    "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + port});
  }
  const auto results =
      run_world({"run", "--scenario", "toy_cnn", "--steps", "4", "--out", dir}, envs);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_passing_report(dir);
}

// Rank 1 of a torchrun-style world of 2 whose rank 0 never shows up, with --timeout 3: it must
// end within the timeout, exit 3, name the address and leave no output folder.
void expect_lonely_rank_names(const std::string& port, const std::string& out,
                              const std::string& message) {
  const auto start = std::chrono::steady_clock::now();
  const auto r = testing::ddpbench(
      {"run", "--scenario", "linear_mse", "--timeout", "3", "--out", out},
      {"RANK=1", "LOCAL_RANK=1", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + port});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  EXPECT_LT(seconds, 25) << "the rendezvous ignored --timeout 3";
  EXPECT_FALSE(fs::exists(out));
}

// A rank whose rendezvous store never answers gives up after --timeout (not a fixed 30 s) and
// names the address it could not reach.
TEST_F(Launchers, AnUnreachableStoreEndsWithinTheTimeoutNamingTheAddress) {
  const std::string port = std::to_string(testing::free_port());
  expect_lonely_rank_names(port, tmp_ + "/lonely",
                           "could not reach the rendezvous store at 127.0.0.1:" + port);
}

// A port where something else listens (here a socket that never answers; in the wild another
// program, or a proxy that accepts any connection) fails at the first store operation, not at the
// connect: that failure names the address and the timeout too.
TEST_F(Launchers, AListenerThatIsNotAStoreIsNamedWithinTheTimeout) {
  const testing::SilentListener stranger;
  const std::string port = std::to_string(stranger.port());
  expect_lonely_rank_names(port, tmp_ + "/stranger",
                           "rendezvous store at 127.0.0.1:" + port + " within 3 s");
}

TEST_F(Launchers, SlurmVariablesByHand) {
  const std::string dir = tmp_ + "/slurm";
  const std::string port = std::to_string(testing::free_port());
  std::vector<std::vector<std::string>> envs;
  for (int r = 0; r < 2; ++r) {
    envs.push_back({"SLURM_PROCID=" + std::to_string(r), "SLURM_LOCALID=" + std::to_string(r),
                    "SLURM_NTASKS=2", "SLURM_NODELIST=localhost", "SLURM_JOB_ID=42",
                    "MASTER_PORT=" + port});
  }
  const auto results = run_world({"run", "--scenario", "linear_mse", "--out", dir}, envs);
  for (const auto& r : results) EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_passing_report(dir);
}

// torchrun as the cluster files in launchers/ run it. Its static rendezvous (and its c10d one from
// PyTorch 2.4 on) has the agent serve the store on MASTER_PORT itself
// (TORCHELASTIC_USE_AGENT_STORE=True): rank 0 serving there too failed "address already in use"
// until the ranks joined the agent's store as torch.distributed does.
// PyTorch's own torchrun needs no ddpbench: a world of one `true`. Debian's torch 1.13 torchrun
// cannot start under Python 3.11 (its `to_map` reads None.get); the PyPI suite's 2.11 can.
TEST_F(Launchers, RealTorchrun) {
  const auto probe = testing::python({"-m", "torch.distributed.run", "--nnodes", "1",
                                      "--nproc_per_node", "1", "--master_port",
                                      std::to_string(testing::free_port()), "--no_python", "true"});
  if (probe.exit_code != 0) {
    const std::string err =
        probe.err.substr(probe.err.find_last_of('\n', probe.err.size() - 2) + 1);
    GTEST_SKIP() << "the oracle Python's torchrun cannot start a world of `true`: " << err;
  }
  const std::vector<std::vector<std::string>> rendezvous = {
      {"--master_addr", "127.0.0.1", "--master_port", std::to_string(testing::free_port())},
      {"--rdzv_backend", "c10d", "--rdzv_endpoint",
       "127.0.0.1:" + std::to_string(testing::free_port()), "--rdzv_id", "ddpbench"}};
  for (size_t i = 0; i < rendezvous.size(); ++i) {
    const std::string dir = tmp_ + "/torchrun-" + std::to_string(i);
    std::vector<std::string> argv = {"-m", "torch.distributed.run", "--nnodes",
                                     "1",  "--nproc_per_node",      "2"};
    argv.insert(argv.end(), rendezvous[i].begin(), rendezvous[i].end());
    for (const char* a : {"--no_python", testing::kDdpbenchBinary, "run", "--scenario",
                          "linear_mse", "--steps", "2", "--timeout", "60", "--out"}) {
      argv.push_back(a);
    }
    argv.push_back(dir);
    const auto r = testing::python(argv);
    ASSERT_EQ(r.exit_code, 0) << rendezvous[i][0] << ": " << r.out << r.err;
    expect_passing_report(dir);
  }
}

TEST_F(Launchers, RealMpirunWithGlooAndWithMpiBackends) {
  for (const std::string backend : {"gloo", "mpi"}) {
    const std::string dir = tmp_ + "/mpirun-" + backend;
    const auto r = testing::run_process(
        {"mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2", testing::kDdpbenchBinary,
         "run", "--scenario", "toy_cnn", "--steps", "4", "--backend", backend, "--out", dir});
    ASSERT_EQ(r.exit_code, 0) << backend << ": " << r.out << r.err;
    expect_passing_report(dir);
    EXPECT_EQ(read_json(dir + "/report.json").at("results")[1].at("backend"), backend);
  }
}

}  // namespace
}  // namespace ddpbench
