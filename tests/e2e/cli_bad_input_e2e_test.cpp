// cli_bad_input_e2e_test.cpp — the bad-input contract of the real ddpbench binary: a flag, a
// value, a data file or an address it refuses exits 2 with exactly one line on stderr naming the
// problem (input echoed escaped and cut short), and writes nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/cli_e2e_fixture.h"
#include "support/cli_runner.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;

struct BadInputCase {
  std::string name;
  std::vector<std::string> args;
  std::string expect_in_message;
};

// The data folders and files the cases read, under `tmp`: an empty folder, a CIFAR batch too short,
// a plain file, IDX files with hostile headers, and a CIFAR batch that is a folder.
void write_hostile_data_files(const std::string& tmp, const std::string& empty,
                              const std::string& corrupt) {
  fs::create_directories(empty);
  fs::create_directories(corrupt);
  std::ofstream(corrupt + "/data_batch_1.bin") << "too short";
  std::ofstream(tmp + "/a_file") << "x";
  // IDX files (uncompressed; gzread reads them as they are) with hostile headers.
  const auto idx = [](std::vector<uint32_t> header, size_t payload) {
    std::string bytes;
    for (uint32_t v : header) {
      for (int shift = 24; shift >= 0; shift -= 8) bytes += static_cast<char>((v >> shift) & 0xff);
    }
    bytes += std::string(payload, '\0');
    return bytes;
  };
  const auto write_idx = [&tmp, &idx](const std::string& dir, std::vector<uint32_t> images,
                                      size_t image_payload, uint32_t labels) {
    fs::create_directories(tmp + "/" + dir);
    std::ofstream(tmp + "/" + dir + "/train-images-idx3-ubyte.gz", std::ios::binary)
        << idx(images, image_payload);
    std::ofstream(tmp + "/" + dir + "/train-labels-idx1-ubyte.gz", std::ios::binary)
        << idx({0x801, labels}, labels);
  };
  write_idx("idx_overflow", {0x803, 4194304, 2097152, 2097152}, 16, 4);
  write_idx("idx_32x32", {0x803, 4, 32, 32}, 4 * 32 * 32, 4);
  fs::create_directories(tmp + "/cifar_dir/data_batch_1.bin");
}

// Flags, values and data files refused before anything runs.
std::vector<BadInputCase> refused_flags_and_data_files(const std::string& tmp,
                                                       const std::string& out,
                                                       const std::string& empty,
                                                       const std::string& corrupt) {
  return {
      {"unknown scenario", {"run", "--scenario", "nope", "--out", out}, "cifar_resnet18"},
      {"zero steps", {"run", "--steps", "0", "--out", out}, "--steps"},
      {"negative batch", {"run", "--batch-size", "-4", "--out", out}, "--batch-size"},
      {"negative seed", {"run", "--seed", "-1", "--out", out}, "--seed"},
      {"bad dtype", {"run", "--dtype", "float16", "--out", out}, "float16"},
      {"unknown mode", {"run", "--modes", "single,warp", "--out", out}, "warp"},
      {"mode twice",
       {"run", "--modes", "single,ddp", "--modes", "ddp", "--out", out},
       "--modes lists ddp twice"},
      {"unwritable out",
       {"run", "--scenario", "linear_mse", "--out", tmp + "/a_file/sub"},
       "--out"},
      {"missing data dir", {"run", "--data-dir", tmp + "/nope", "--out", out}, "--data-dir"},
      {"cifar files missing",
       {"run", "--scenario", "toy_cnn", "--data-dir", empty, "--out", out},
       "data_batch"},
      {"cifar file corrupt",
       {"run", "--scenario", "toy_cnn", "--data-dir", corrupt, "--out", out},
       "data_batch_1.bin"},
      {"idx files missing",
       {"run", "--scenario", "fashion_mnist_cnn", "--data-dir", empty, "--out", out},
       "train-images-idx3-ubyte.gz"},
      {"zero replicas", {"sampler", "--dataset-size", "10", "--replicas", "0"}, "--replicas"},
      {"missing dataset size", {"sampler"}, "--dataset-size"},
      {"unknown flag", {"run", "--warp-speed"}, "--warp-speed"},
      {"no subcommand", {}, "subcommand"},
      {"IDX sizes that overflow",
       {"run", "--scenario", "fashion_mnist_cnn", "--data-dir", tmp + "/idx_overflow", "--out",
        out},
       "multiply past 2^64"},
      {"IDX images that are not 28x28",
       {"run", "--scenario", "fashion_mnist_cnn", "--data-dir", tmp + "/idx_32x32", "--out", out},
       "needs 1x28x28"},
      {"CIFAR batch that is a folder",
       {"run", "--scenario", "toy_cnn", "--data-dir", tmp + "/cifar_dir", "--out", out},
       "is not a regular file"},
  };
}

// Addresses, data folders, faults, timeouts, bucket sizes and backends refused, and hostile input
// echoed escaped.
std::vector<BadInputCase> refused_settings_faults_and_hostile_input(const std::string& tmp,
                                                                    const std::string& out,
                                                                    const std::string& empty) {
  return {
      {"master address that does not resolve",
       {"run", "--scenario", "linear_mse", "--gpus", "2", "--master-addr", "no.such.host.invalid",
        "--out", out},
       "does not resolve"},
      {"master address of another machine",
       {"run", "--scenario", "linear_mse", "--gpus", "2", "--master-addr", "192.0.2.1", "--out",
        out},
       "is not an address of this machine"},
      {"data dir is a file",
       {"run", "--scenario", "toy_cnn", "--data-dir", tmp + "/a_file", "--out", out},
       "is not a directory"},
      {"data dir for a scenario on generated data",
       {"run", "--scenario", "linear_mse", "--data-dir", empty, "--out", out},
       "--data-dir does not apply to linear_mse"},
      {"non-finite grad fault",
       {"run", "--scenario", "linear_mse", "--gpus", "2", "--inject-fault",
        "grad:rank=1,step=0,eps=nan", "--out", out},
       "bad value 'nan' for eps"},
      {"infinite timeout", {"run", "--timeout", "inf", "--out", out}, "--timeout inf"},
      {"nan timeout", {"run", "--timeout", "nan", "--out", out}, "--timeout nan"},
      {"huge timeout", {"run", "--timeout", "1e10", "--out", out}, "a week"},
      {"tiny timeout", {"run", "--timeout", "1e-9", "--out", out}, "--timeout 1e-09"},
      {"nan bucket", {"run", "--bucket-cap-mb", "nan", "--out", out}, "--bucket-cap-mb nan"},
      {"inf first bucket", {"run", "--first-bucket-mb", "inf", "--out", out}, "--first-bucket-mb"},
      {"backend without ddp",
       {"run", "--scenario", "linear_mse", "--modes", "single", "--backend", "mpi", "--out", out},
       "--backend mpi only applies to the ddp and zero modes"},
      {"fault without rank or step",
       {"run", "--scenario", "linear_mse", "--gpus", "2", "--inject-fault", "crash", "--out", out},
       "rank is missing"},
      {"fault field repeated",
       {"run", "--scenario", "linear_mse", "--gpus", "2", "--inject-fault",
        "crash:rank=1,step=0,rank=0", "--out", out},
       "given twice"},
      {"fault on a tensor the model lacks",
       {"run", "--scenario", "linear_mse", "--gpus", "2", "--inject-fault",
        "grad:rank=1,step=0,tensor=nope", "--out", out},
       "tensor 'nope' is not a trained parameter of linear_mse"},
      {"hostile value that CLI11 echoes",
       {"run", "--dtype", "\x1b[2J" + std::string(50000, 'y'), "--out", out},
       "\\x1b[2Jyyy"},
      {"hostile scenario name",
       {"run", "--scenario", "\x1b[2J" + std::string(100000, 'x'), "--out", out},
       "'\\x1b[2Jxxx"},
  };
}

TEST_F(CliE2E, BadInputIsOneLineExitTwoAndNothingWritten) {
  const std::string out = tmp_ + "/out";
  const std::string empty = tmp_ + "/empty";
  const std::string corrupt = tmp_ + "/corrupt";
  write_hostile_data_files(tmp_, empty, corrupt);
  std::vector<BadInputCase> cases = refused_flags_and_data_files(tmp_, out, empty, corrupt);
  const std::vector<BadInputCase> more =
      refused_settings_faults_and_hostile_input(tmp_, out, empty);
  cases.insert(cases.end(), more.begin(), more.end());
  for (const auto& c : cases) {
    const auto r = ddpbench(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.name << ": " << r.err;
    EXPECT_EQ(testing::count_lines(r.err), 1) << c.name << ": " << r.err;
    EXPECT_LT(r.err.size(), 1500u) << c.name << ": echoed input not cut short";
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << c.name << ": raw escape echoed";
    EXPECT_EQ(r.err.rfind("ddpbench: error: ", 0), 0u) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.expect_in_message), std::string::npos) << c.name << ": " << r.err;
    EXPECT_FALSE(fs::exists(out)) << c.name << ": wrote " << out;
  }
}

}  // namespace
}  // namespace ddpbench
