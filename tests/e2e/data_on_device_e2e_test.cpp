// data_on_device_e2e_test.cpp — `--data-on-device` through the binary (issue 77 item 1): every
// mode trains on batches gathered from the dataset materialised on its device, and ends in the
// same bytes as with the host collate, for each device form: augmented images (tiny_resnet:
// synthetic CIFAR-10 with RandomCrop and RandomHorizontalFlip; single, dp and ddp, accumulation
// 2), fixed-shape token blocks (gpt_tiny) and padded token sequences of varying length
// (imdb_gcnn); the header says where the batches come from. The smallest models of each kind:
// the bytes, not the speed, are the property.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "support/cli_runner.h"
#include "support/temp_dir_test.h"

namespace ddpbench {
namespace {
using testing::ddpbench;
using testing::read_json;

struct DeviceForm {
  const char* scenario;
  const char* modes;
  const char* accumulation;
};

class DataOnDeviceE2E : public testing::TempDirTest,
                        public ::testing::WithParamInterface<DeviceForm> {};

TEST_P(DataOnDeviceE2E, EveryModeEndsInTheHostCollatesBytes) {
  const DeviceForm form = GetParam();
  for (const bool on_device : {false, true}) {
    const std::string out = path(on_device ? "device" : "host");
    std::vector<std::string> args = testing::short_checked_run(form.scenario, 2, 4, 1, out);
    args.erase(std::find(args.begin(), args.end(), "--quiet"));
    args.insert(args.end(),
                {"--modes", form.modes, "--accumulation-steps", form.accumulation});
    if (on_device) args.push_back("--data-on-device");
    const auto r = ddpbench(args);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(read_json(out + "/report.json").at("passed").get<bool>());
    if (on_device) {
      EXPECT_NE(r.out.find("--data-on-device: materialised on each process's device"),
                std::string::npos)
          << r.out;
    }
  }
  std::string modes = form.modes;
  for (size_t begin = 0, end = 0; begin <= modes.size(); begin = end + 1) {
    end = std::min(modes.find(',', begin), modes.size());
    const std::string file = "/state_" + modes.substr(begin, end - begin) + ".pt";
    const std::string host = testing::bytes_of(path("host") + file);
    EXPECT_FALSE(host.empty()) << file;
    EXPECT_EQ(testing::bytes_of(path("device") + file), host) << file;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Forms, DataOnDeviceE2E,
    ::testing::Values(DeviceForm{"tiny_resnet", "single,dp,ddp", "2"},
                      DeviceForm{"gpt_tiny", "single,ddp", "1"},
                      DeviceForm{"imdb_gcnn", "single,ddp", "1"}),
    [](const ::testing::TestParamInfo<DeviceForm>& info) {
      return std::string(info.param.scenario);
    });

}  // namespace
}  // namespace ddpbench
