// bad_input_e2e_test.cpp — every bad input refused before anything runs or is written, through the
// real binary (issue 21's battery, items 6-14): wildcard rendezvous addresses, --out paths with
// trailing slashes or "..", unbounded ranks and threads, `report --out` into a folder it does not
// own, numbers too large for the sampler or the step count, a TMPDIR that is not a folder, and
// external ranks with a port out of range, a world size that contradicts --gpus or a rendezvous
// that outlives --timeout. Each refusal: exit 2, one line naming the problem, nothing written.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;

class BadInput : public testing::TempDirTest {
 protected:
  static void expect_refused(const testing::ProcessResult& r, const std::string& named) {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
  }
  // Runs ddpbench with the working directory `cwd` (relative --out paths resolve there).
  static testing::ProcessResult ddpbench_in(const std::string& cwd,
                                            const std::vector<std::string>& args) {
    std::string command =
        "cd '" + cwd + "' && exec '" + std::string(testing::kDdpbenchBinary) + "'";
    for (const auto& a : args) command += " '" + a + "'";
    return testing::run_process({"bash", "-c", command});
  }
};

// Item 6: gloo cannot listen on "every interface"; both ranks died and the parent sat out the
// whole timeout.
TEST_F(BadInput, AWildcardMasterAddressIsRefusedUpFront) {
  for (const char* wildcard : {"0.0.0.0", "::", "0"}) {
    const auto start = std::chrono::steady_clock::now();
    expect_refused(ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--master-addr",
                             wildcard, "--out", path("o")}),
                   "wildcard");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
    EXPECT_FALSE(fs::exists(path("o")));
  }
}

// Item 7: "cannot create directory ... (it appeared meanwhile)" for new folders spelled with a
// trailing slash or a "..", in run, report and scale alike.
TEST_F(BadInput, NewOutFoldersWithTrailingSlashesOrDotsAreCreated) {
  fs::create_directories(path("cwd"));
  const std::string cwd = path("cwd");
  for (const auto& [given, made] :
       std::vector<std::pair<std::string, std::string>>{{"newdir/", "newdir"},
                                                        {"a/b/c/", "a/b/c"},
                                                        {"./newdot/.", "newdot"},
                                                        {"newx/../newy", "newy"}}) {
    const auto r = ddpbench_in(
        cwd, {"run", "--scenario", "linear_mse", "--steps", "1", "--quiet", "--out", given});
    EXPECT_EQ(r.exit_code, 0) << given << ": " << r.err;
    EXPECT_TRUE(fs::exists(cwd + "/" + made + "/report.json")) << given;
  }
  EXPECT_FALSE(fs::exists(cwd + "/newx"));
  const auto report = ddpbench_in(cwd, {"report", "newdir/report.json", "--out", "rendered/"});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_TRUE(fs::exists(cwd + "/rendered/report.html"));
  const auto scale = ddpbench_in(cwd, {"scale", "--scenario", "linear_mse", "--gpus", "1",
                                       "--steps", "1", "--warmup", "0", "--out", "sx/../sweep/"});
  EXPECT_EQ(scale.exit_code, 0) << scale.err;
  EXPECT_TRUE(fs::exists(cwd + "/sweep/report.json"));
}

// Item 8: --threads 100000 grew past 1,900 threads; --gpus 1000 started a thousand processes.
TEST_F(BadInput, RanksAndThreadsAreBoundedByTheCores) {
  expect_refused(
      ddpbench({"run", "--scenario", "linear_mse", "--threads", "100000", "--out", path("o")}),
      "--threads 100000");
  const auto start = std::chrono::steady_clock::now();
  const auto many = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "1000", "--batch-size",
                              "1000", "--out", path("o")});
  expect_refused(many, "--oversubscribe");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  EXPECT_FALSE(fs::exists(path("o")));
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  expect_refused(ddpbench({"run", "--scenario", "linear_mse", "--threads",
                           std::to_string(cores + 1), "--out", path("o")}),
                 "--oversubscribe");
  // Asked for, it runs.
  const auto allowed = ddpbench({"run", "--scenario", "linear_mse", "--steps", "1", "--threads",
                                 std::to_string(cores + 1), "--oversubscribe", "--out", path("o")});
  EXPECT_EQ(allowed.exit_code, 0) << allowed.err;
}

// Item 9: `report --out` into another run's folder overwrote its report.json and left another
// scenario's state file beside it; into a folder of foreign files it wrote anyway. Replacing
// the run's folder whole then removed its results: a command that only renders now refuses it
// (render_refusals_e2e_test.cpp).
TEST_F(BadInput, ReportOutFollowsTheOwnershipRulesOfRunOut) {
  ASSERT_EQ(
      ddpbench({"run", "--scenario", "toy_cnn", "--steps", "1", "--quiet", "--out", path("toy")})
          .exit_code,
      0);
  ASSERT_EQ(
      ddpbench({"run", "--scenario", "linear_mse", "--steps", "1", "--quiet", "--out", path("lin")})
          .exit_code,
      0);
  ASSERT_TRUE(fs::exists(path("lin/state_single.pt")));
  expect_refused(ddpbench({"report", path("toy/report.json"), "--out", path("lin")}),
                 "report.json");
  EXPECT_EQ(testing::read_json(path("lin/report.json")).at("config").at("scenario"), "linear_mse");
  EXPECT_TRUE(fs::exists(path("lin/state_single.pt")));

  fs::create_directories(path("mine"));
  std::ofstream(path("mine/notes.txt")) << "keep";
  expect_refused(ddpbench({"report", path("toy/report.json"), "--out", path("mine")}), "notes.txt");
  EXPECT_FALSE(fs::exists(path("mine/report.json")));
  // Into the report's own folder, the renderings are added as before.
  EXPECT_EQ(ddpbench({"report", path("toy/report.json")}).exit_code, 0);
}

// Item 11: bad_alloc and library errors exited 3 ("failure: ...") instead of 2.
TEST_F(BadInput, HugeSamplerSizesAndABadTmpdirAreBadInput) {
  for (const char* n : {"1000000000000", "9223372036854775807", "99999999999999999999"}) {
    expect_refused(ddpbench({"sampler", "--dataset-size", n, "--replicas", "2", "--shuffle"}),
                   "too large");
  }
  const auto r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--out", path("o")},
                          {"TMPDIR=/nonexistent"});
  expect_refused(r, "TMPDIR");
  EXPECT_FALSE(fs::exists(path("o")));
}

// Item 12: MASTER_PORT=99999 listened on 34463 on every interface, the rendezvous took 38 s with
// --timeout 6, and --gpus 4 under WORLD_SIZE=2 was dropped silently.
TEST_F(BadInput, ExternalRanksCheckTheirPortTimeoutAndWorldSize) {
  const std::vector<std::string> rank0 = {"RANK=0", "LOCAL_RANK=0", "WORLD_SIZE=2",
                                          "MASTER_ADDR=127.0.0.1"};
  auto with_port = [&rank0](const std::string& port) {
    std::vector<std::string> env = rank0;
    env.push_back("MASTER_PORT=" + port);
    return env;
  };
  for (const char* port : {"99999", "0", "65536", "-1"}) {
    expect_refused(
        ddpbench({"run", "--scenario", "linear_mse", "--out", path("o")}, with_port(port)),
        "MASTER_PORT");
  }
  const std::string port = std::to_string(testing::free_port());
  expect_refused(ddpbench({"run", "--scenario", "linear_mse", "--gpus", "4", "--out", path("o")},
                          with_port(port)),
                 "--gpus 4");
  EXPECT_FALSE(fs::exists(path("o")));

  // Rank 0 alone: its peer never comes, and --timeout 4 is the limit.
  const auto start = std::chrono::steady_clock::now();
  const auto lonely = ddpbench(
      {"run", "--scenario", "linear_mse", "--timeout", "4", "--out", path("o")}, with_port(port));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(lonely.exit_code, 3) << lonely.err;
  EXPECT_LT(seconds, 4 + 10) << "the rendezvous ignored --timeout 4: " << lonely.err;
  EXPECT_FALSE(fs::exists(path("o")));
}

// Item 12, "bind where the address says": rank 0's store listens on MASTER_ADDR only. PyTorch
// 1.13's TCPStore cannot be handed a socket, and listens on every interface.
TEST_F(BadInput, RankZerosStoreListensOnMasterAddrOnly) {
  const auto version = ddpbench({"--version"});
  if (version.out.find("libtorch 1.") != std::string::npos) {
    GTEST_SKIP() << "libtorch 1.13's TCPStore binds every interface (no masterListenFd)";
  }
  const int port = testing::free_port();
  // /proc/net/tcp lists "local_address" as hex IP:port; 0A is LISTEN; 0100007F is 127.0.0.1.
  std::ostringstream hex;
  hex << std::uppercase << std::hex << std::setw(4) << std::setfill('0') << port;
  const std::string hex_port = hex.str();
  const std::string probe = "for i in $(seq 200); do l=$(grep -h ':" + hex_port +
                            " 00000000:0000 0A' /proc/net/tcp /proc/net/tcp6 | awk '{print $2}'); "
                            "[ -n \"$l\" ] && { echo $l; exit 0; }; sleep 0.05; done; echo none";
  std::string command = std::string("'") + testing::kDdpbenchBinary +
                        "' run --scenario linear_mse --timeout 5 --out '" + path("o") +
                        "' >/dev/null 2>&1 & " + probe + "; wait";
  const auto r = testing::run_process(
      {"bash", "-c", command}, {"RANK=0", "LOCAL_RANK=0", "WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1",
                                "MASTER_PORT=" + std::to_string(port)});
  EXPECT_EQ(r.out, "0100007F:" + hex_port + "\n") << "listening on " << r.out;
}

// Item 14: a too-large step count is said to be too large; --help shows the defaults; a partial
// CIFAR download and a batch larger than the dataset are said in the header.
TEST_F(BadInput, SmallerThingsAreSaid) {
  expect_refused(ddpbench({"run", "--steps", "99999999999999999999", "--out", path("o")}),
                 "too large");
  const auto help = ddpbench({"run", "--help"});
  EXPECT_NE(help.out.find("single,dp,ddp without --gpus"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("every usable GPU, else 2 CPU ranks"), std::string::npos) << help.out;

  testing::write_cifar_batch(path("cifar"), 40, 3);  // data_batch_1.bin only
  const auto partial = ddpbench({"run", "--scenario", "toy_cnn", "--data-dir", path("cifar"),
                                 "--batch-size", "16", "--steps", "1", "--out", path("c")});
  EXPECT_EQ(partial.exit_code, 0) << partial.err;
  EXPECT_NE(partial.out.find("data_batch_2.bin"), std::string::npos) << partial.out;

  const auto big = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--batch-size", "40",
                             "--steps", "1", "--out", path("b")});
  EXPECT_EQ(big.exit_code, 0) << big.err;
  EXPECT_NE(big.out.find("each step has 20 samples"), std::string::npos) << big.out;

  // Debian's libtorch 1.13 is a CPU build: that comes first, not the driver's complaint.
  if (ddpbench({"--version"}).out.find("libtorch 1.") != std::string::npos) {
    const auto device = ddpbench({"run", "--scenario", "linear_mse", "--steps", "1", "--device",
                                  "cuda", "--out", path("d")});
    expect_refused(device, "--device cuda: this libtorch is a CPU build");
  }
}

}  // namespace
}  // namespace ddpbench
