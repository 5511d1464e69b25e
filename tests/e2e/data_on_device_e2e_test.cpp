// data_on_device_e2e_test.cpp — `--data-on-device` through the binary (issue 77 item 1): every
// mode trains on batches gathered and augmented from the dataset materialised on its device, and
// ends in the same bytes as with the host collate (cifar_resnet18: synthetic CIFAR-10 with
// RandomCrop and RandomHorizontalFlip; single, dp and ddp, accumulation 2); a dataset without a
// device form yet (gpt_tiny's token sequences) is collated on the host and the header says so.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
using testing::ddpbench;
using testing::read_json;

class DataOnDeviceE2E : public testing::TempDirTest {};

TEST_F(DataOnDeviceE2E, EveryModeEndsInTheHostCollatesBytes) {
  for (const bool on_device : {false, true}) {
    const std::string out = path(on_device ? "device" : "host");
    std::vector<std::string> args = testing::short_checked_run("cifar_resnet18", 2, 4, 1, out);
    args.insert(args.end(), {"--modes", "single,dp,ddp", "--accumulation-steps", "2"});
    if (on_device) args.push_back("--data-on-device");
    const auto r = ddpbench(args);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(read_json(out + "/report.json").at("passed").get<bool>());
  }
  for (const char* mode : {"single", "dp", "ddp"}) {
    const std::string file = std::string("/state_") + mode + ".pt";
    EXPECT_EQ(testing::bytes_of(path("device") + file), testing::bytes_of(path("host") + file))
        << mode;
  }
}

TEST_F(DataOnDeviceE2E, ADatasetWithoutADeviceFormIsCollatedOnTheHostAndSaysSo) {
  std::vector<std::string> args = testing::short_checked_run("gpt_tiny", 2, 4, 2, path("gpt"));
  args.erase(std::find(args.begin(), args.end(), "--quiet"));
  args.insert(args.end(), {"--modes", "single,ddp", "--data-on-device"});
  const auto r = ddpbench(args);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("has no device form yet (only image datasets have one): collated on the "
                       "host"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace ddpbench
