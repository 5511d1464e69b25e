// hostile_input_e2e_test.cpp — the hostile-user battery on landed main, through the real binary:
// a 939-byte YAML "billion laughs" that hung run and scale, empty values taken as absent, empty
// list elements dropped, comm's unbounded --timeout, its ranks unbounded by the cores, a repeated
// rank= in its fault, and sizes that gave a collective nothing to measure yet printed OK. Each
// refusal: exit 2, one line naming the problem, nothing written, nothing started.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"
#include "support/test_paths.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;

class HostileInput : public testing::TempDirTest {
 protected:
  void expect_refused(const std::vector<std::string>& args, const std::string& named) {
    const auto r = ddpbench(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.out << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(path("o")));
  }
  // Ten levels of ten aliases: 10^10 leaves from 939 bytes.
  std::string write_laughs() {
    std::string text = "SCENARIO.BASE: linear_mse\nl0: &l0 {x: lol}\n";
    for (int level = 1; level <= 9; ++level) {
      text += "l" + std::to_string(level) + ": &l" + std::to_string(level) + " [";
      for (int i = 0; i < 10; ++i) text += (i ? ",*l" : "*l") + std::to_string(level - 1);
      text += "]\n";
    }
    text += "TRAIN: {STEPS: *l9}\n";
    const std::string file = path("laughs.yaml");
    std::ofstream(file) << text;
    return file;
  }
};

// Defect 4: memory grew by about 200 MB/s and run never started. `timeout` bounds the old
// behaviour so this test fails instead of hanging.
TEST_F(HostileInput, AYamlBillionLaughsIsRefusedAtOnce) {
  const std::string file = write_laughs();
  for (const char* command : {"run", "scale"}) {
    const auto r = testing::run_process(
        {"timeout", "20", testing::kDdpbenchBinary, command, "--config", file, "--out", path("o")});
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << r.err;
    EXPECT_NE(r.err.find("laughs.yaml' line 2: YAML anchors and aliases"), std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(path("o")));
  }
}

// Defect 9: `--config ''` ran the default scenario, `list --yaml ''` printed the table.
TEST_F(HostileInput, EmptyValuesAreRefused) {
  const std::string o = path("o");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"run", "--config", "", "--out", o},
           {"run", "--scenario", "", "--out", o},
           {"run", "--out", ""},
           {"run", "--data-dir", "", "--out", o},
           {"run", "--modes", "", "--out", o},
           {"run", "--master-addr", "", "--out", o},
           {"run", "--inject-fault", "", "--out", o},
           {"scale", "--scenario", "", "--out", o},
           {"comm", "--out", ""},
           {"comm", "--min-bytes", "", "--out", o},
           {"list", "--yaml", ""},
           {"project", "--from", "", "--out", o},
           {"report", "", "--out", o},
           {"gate", "--baseline", "", "--current", path("x.json")},
           {"gate", "--baseline", path("x.json"), "--current", path("x.json"), "--thresholds",
            ""}}) {
    expect_refused(args, "the value is empty");
  }
}

// Defect 8 (minor): CLI11's delimiter dropped the empty element and ran the rest.
TEST_F(HostileInput, EmptyListElementsAreRefused) {
  const std::string o = path("o");
  expect_refused({"scale", "--scenario", "linear_mse", "--gpus", "1,,2", "--out", o},
                 "--gpus: '1,,2' has an empty element");
  expect_refused({"project", "--from", path("x.json"), "--devices", "8,,64", "--out", o},
                 "--devices: '8,,64' has an empty element");
  expect_refused({"run", "--modes", "single,", "--out", o}, "--modes: 'single,' has an empty");
  expect_refused({"comm", "--collectives", ",allreduce", "--out", o}, "empty element");
  // The elements are still checked one by one.
  expect_refused({"scale", "--gpus", "1,0", "--out", o}, "'0' must be an integer >= 1");
}

// Defect 14: 1e300 overflowed ("no progress for -9223372036854775 s"), 1e-9 was a false hang.
TEST_F(HostileInput, CommTimeoutHasRunsBounds) {
  for (const char* t : {"1e300", "1e-9", "0", "nan"}) {
    expect_refused({"comm", "--timeout", t, "--out", path("o")}, "--timeout");
  }
  const auto run = ddpbench({"run", "--timeout", "1e-9", "--out", path("o")});
  const auto comm = ddpbench({"comm", "--timeout", "1e-9", "--out", path("o")});
  EXPECT_EQ(run.err, comm.err) << "one definition of the bounds";
}

// Defect 8 (minor): comm started more ranks than run allows on these cores.
TEST_F(HostileInput, CommRanksAreBoundedByTheCoresLikeRun) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t limit = std::max<int64_t>(8, 4 * cores);
  if (limit + 1 > 64) GTEST_SKIP() << "comm's --gpus stops at 64, below this machine's limit";
  const std::string too_many = std::to_string(limit + 1);
  expect_refused({"comm", "--gpus", too_many, "--out", path("o")}, "--oversubscribe");
  expect_refused({"run", "--scenario", "linear_mse", "--gpus", too_many, "--batch-size", "100",
                  "--out", path("o")},
                 "--oversubscribe");
}

// Defect 8 (minor): corrupt:rank=0,rank=1 took the last rank without a word.
TEST_F(HostileInput, CommFaultRefusesARepeatedField) {
  expect_refused({"comm", "--inject-fault", "corrupt:rank=0,rank=1", "--out", path("o")},
                 "'rank' is given twice");
}

// Defect 10: every size was below one element per rank, so nothing was measured, and the
// footer said OK.
TEST_F(HostileInput, CommSizesThatMeasureNothingAreRefused) {
  expect_refused({"comm", "--gpus", "2", "--min-bytes", "4", "--max-bytes", "4", "--collectives",
                  "allgather,reduce_scatter", "--out", path("o")},
                 "allgather nothing to measure at 2 ranks: it needs at least 8 B");
  expect_refused({"comm", "--gpus", "4", "--min-bytes", "8", "--max-bytes", "12", "--dtype",
                  "float64", "--collectives", "reduce_scatter", "--out", path("o")},
                 "pass --min-bytes 32 or more");
}

// Defect 17: the IPv4-mapped wildcard passed the check and failed in gloo at exit 3.
TEST_F(HostileInput, EverySpellingOfTheWildcardAddressIsRefused) {
  for (const char* wildcard :
       {"::ffff:0.0.0.0", "::ffff:0:0", "0:0:0:0:0:ffff:0:0", "::0", "0x0", "0.0", "000.0.0.0"}) {
    expect_refused({"run", "--scenario", "linear_mse", "--gpus", "2", "--master-addr", wildcard,
                    "--out", path("o")},
                   "wildcard");
  }
}

}  // namespace
}  // namespace ddpbench
