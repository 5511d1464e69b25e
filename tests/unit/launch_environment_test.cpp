// launch_environment_test.cpp — launcher detection from environment variables set by hand:
// torchrun, Slurm (srun), OpenMPI (mpirun), a ddpbench-spawned worker, none, and broken ones.
#include <gtest/gtest.h>

#include <map>

#include "errors.h"
#include "launch/environment.h"

namespace ddpbench::launch {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(LaunchEnvironment, NoVariablesMeansThisProcessLaunches) {
  EXPECT_FALSE(detect_world(env_of({{"HOME", "/root"}})).has_value());
}

TEST(LaunchEnvironment, Torchrun) {
  const auto w = detect_world(env_of({{"RANK", "3"},
                                      {"WORLD_SIZE", "8"},
                                      {"LOCAL_RANK", "1"},
                                      {"MASTER_ADDR", "node0"},
                                      {"MASTER_PORT", "29500"}}));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->launcher, Launcher::kTorchrun);
  EXPECT_EQ(w->rank, 3);
  EXPECT_EQ(w->world_size, 8);
  EXPECT_EQ(w->local_rank, 1);
  EXPECT_EQ(w->master_addr, "node0");
  EXPECT_EQ(w->master_port, 29500);
}

// torchrun's agent serves the store itself (static rendezvous; c10d's from PyTorch 2.4): every
// rank connects into PyTorch's per-attempt prefix, rank 0 included, instead of serving the port.
TEST(LaunchEnvironment, TorchrunsAgentStoreIsJoinedUnderItsAttemptPrefix) {
  std::map<std::string, std::string> vars{{"RANK", "0"},
                                          {"WORLD_SIZE", "2"},
                                          {"MASTER_ADDR", "node0"},
                                          {"MASTER_PORT", "29500"},
                                          {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                          {"TORCHELASTIC_RESTART_COUNT", "2"}};
  EXPECT_EQ(detect_world(env_of(vars))->agent_store_prefix, "/worker/attempt_2");
  vars["TORCHELASTIC_USE_AGENT_STORE"] = "False";
  EXPECT_EQ(detect_world(env_of(vars))->agent_store_prefix, "");
  vars.erase("TORCHELASTIC_USE_AGENT_STORE");
  EXPECT_EQ(detect_world(env_of(vars))->agent_store_prefix, "");
  vars["TORCHELASTIC_USE_AGENT_STORE"] = "True";
  vars["TORCHELASTIC_RESTART_COUNT"] = "-1";
  EXPECT_THROW(detect_world(env_of(vars)), InputError);
}

TEST(LaunchEnvironment, SpawnedByDdpbench) {
  const auto w = detect_world(env_of({{"RANK", "0"},
                                      {"WORLD_SIZE", "2"},
                                      {"MASTER_ADDR", "127.0.0.1"},
                                      {"MASTER_PORT", "4000"},
                                      {kSpawnedEnv, "1"}}));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->launcher, Launcher::kDdpbench);
}

TEST(LaunchEnvironment, SlurmDerivesMasterFromNodeListAndJob) {
  const auto w = detect_world(env_of({{"SLURM_PROCID", "5"},
                                      {"SLURM_NTASKS", "8"},
                                      {"SLURM_LOCALID", "1"},
                                      {"SLURM_NODELIST", "gpu[07-10,12],cpu1"},
                                      {"SLURM_JOB_ID", "123456"}}));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->launcher, Launcher::kSlurm);
  EXPECT_EQ(w->rank, 5);
  EXPECT_EQ(w->world_size, 8);
  EXPECT_EQ(w->local_rank, 1);
  EXPECT_EQ(w->master_addr, "gpu07");
  EXPECT_EQ(w->master_port, 20000 + 123456 % 20000);
}

TEST(LaunchEnvironment, SlurmNodeListForms) {
  EXPECT_EQ(first_slurm_host("node1"), "node1");
  EXPECT_EQ(first_slurm_host("node1,node2"), "node1");
  EXPECT_EQ(first_slurm_host("n[3-5]"), "n3");
  EXPECT_EQ(first_slurm_host("rack[2,4]-gpu"), "rack2-gpu");
  EXPECT_THROW(first_slurm_host(""), InputError);
}

TEST(LaunchEnvironment, OpenMpiWithAndWithoutMasterAddress) {
  auto w = detect_world(env_of({{"OMPI_COMM_WORLD_RANK", "1"},
                                {"OMPI_COMM_WORLD_SIZE", "2"},
                                {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->launcher, Launcher::kOpenMpi);
  EXPECT_EQ(w->rank, 1);
  EXPECT_TRUE(w->master_addr.empty()) << "shared through MPI instead";
  w = detect_world(env_of({{"OMPI_COMM_WORLD_RANK", "0"},
                           {"OMPI_COMM_WORLD_SIZE", "2"},
                           {"MASTER_ADDR", "h"},
                           {"MASTER_PORT", "7"}}));
  EXPECT_EQ(w->master_addr, "h");
  EXPECT_EQ(w->master_port, 7);
}

TEST(LaunchEnvironment, InconsistentVariablesNameTheProblem) {
  auto message = [](std::map<std::string, std::string> vars) {
    try {
      detect_world(env_of(std::move(vars)));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "1"}}).find("MASTER_ADDR"),
            std::string::npos);
  EXPECT_NE(
      message({{"RANK", "2"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}})
          .find("outside"),
      std::string::npos);
  EXPECT_NE(
      message({{"RANK", "x"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "a"}, {"MASTER_PORT", "1"}})
          .find("RANK='x'"),
      std::string::npos);
  EXPECT_NE(message({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}).find("SLURM_NODELIST"),
            std::string::npos);
}

}  // namespace
}  // namespace ddpbench::launch
