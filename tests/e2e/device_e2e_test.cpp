// device_e2e_test.cpp — --device as a user meets it on any machine: auto picks what the build and
// machine offer and the report says which; asking for CUDA where there is none (a CPU libtorch,
// or no GPU) is exit 2 with one line, nothing written.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
namespace fs = std::filesystem;
using testing::ddpbench;
using testing::read_json;

class DeviceE2E : public testing::TempDirTest {
 protected:
  // What --device auto picks here, from a short run's report ("cpu" or "cuda"); the header line
  // and the report must agree on it.
  std::string auto_device() {
    const auto r = ddpbench({"run", "--scenario", "linear_mse", "--gpus", "2", "--steps", "2",
                             "--check-only", "--out", path("auto")});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto context = read_json(path("auto") + "/report.json").at("context");
    const std::string device = context.at("device");
    EXPECT_NE(r.out.find("device    " + device), std::string::npos) << r.out;
    EXPECT_FALSE(context.at("numerics").get<std::string>().empty());
    return device;
  }
};

TEST_F(DeviceE2E, AutoRecordsTheDeviceItTrainedOnInTheReport) {
  const std::string device = auto_device();
  EXPECT_TRUE(device == "cpu" || device == "cuda") << device;
}

TEST_F(DeviceE2E, CudaWithoutAUsableDeviceIsExitTwoWithOneLine) {
  if (auto_device() == "cuda") GTEST_SKIP() << "this machine has a usable CUDA device";
  const auto r =
      ddpbench({"run", "--scenario", "linear_mse", "--device", "cuda", "--out", path("cuda")});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("--device cuda: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use --device cpu"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("cuda")));
}

TEST_F(DeviceE2E, DeviceFlagsTravelToScaleChildren) {
  const auto r =
      ddpbench({"scale", "--scenario", "linear_mse", "--gpus", "1,2", "--steps", "2", "--warmup",
                "0", "--device", "cpu", "--tf32", "on", "--out", path("scale")});
  // Each point is a child started from command_line(): a flag it spelled wrong fails the point.
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(read_json(path("scale") + "/report.json").at("context").at("device"), "cpu");
}

}  // namespace
}  // namespace ddpbench
