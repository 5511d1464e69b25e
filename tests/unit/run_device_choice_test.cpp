// run_device_choice_test.cpp — which device a run trains on and every refusal, on a pretend
// machine (no GPU needed): --device cuda without a device, more replicas or ranks than devices
// without --share-gpus, NCCL with two ranks on one device, and the defaults that pick CUDA.
#include <gtest/gtest.h>

#include "errors.h"
#include "run/device_choice.h"

namespace ddpbench::run {
namespace {

using runtime::DeviceKind;

DeviceQuestion machine(int devices) {
  DeviceQuestion q;
  q.usable_devices = devices;
  q.no_device_reason = devices == 0 ? "no CUDA device (pretend)" : "";
  return q;
}

std::string refusal(const DeviceQuestion& q) {
  try {
    choose_device(q);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceChoice, AutoPicksCudaWhenUsableAndTheCpuOtherwise) {
  EXPECT_EQ(choose_device(machine(0)), DeviceKind::kCpu);
  EXPECT_EQ(choose_device(machine(1)), DeviceKind::kCuda);
  DeviceQuestion cpu = machine(8);
  cpu.device = requests::DeviceChoice::kCpu;
  EXPECT_EQ(choose_device(cpu), DeviceKind::kCpu);
}

TEST(DeviceChoice, CudaWithoutADeviceIsRefusedWithTheReasonAndTheFix) {
  DeviceQuestion q = machine(0);
  q.device = requests::DeviceChoice::kCuda;
  const std::string why = refusal(q);
  EXPECT_NE(why.find("--device cuda: no CUDA device (pretend)"), std::string::npos) << why;
  EXPECT_NE(why.find("--device cpu"), std::string::npos) << why;
}

TEST(DeviceChoice, MoreRanksOrReplicasThanDevicesNeedShareGpus) {
  DeviceQuestion ddp = machine(1);
  ddp.world_size = 2;
  ddp.ddp = true;
  EXPECT_NE(refusal(ddp).find("--share-gpus"), std::string::npos) << refusal(ddp);
  ddp.share_gpus = true;
  EXPECT_EQ(choose_device(ddp), DeviceKind::kCuda);

  DeviceQuestion dp = machine(1);
  dp.world_size = 2;
  dp.dp = true;
  EXPECT_NE(refusal(dp).find("one replica per device"), std::string::npos) << refusal(dp);
  dp.share_gpus = true;
  EXPECT_EQ(choose_device(dp), DeviceKind::kCuda);

  DeviceQuestion fits = machine(8);
  fits.world_size = 8;
  fits.dp = fits.ddp = true;
  EXPECT_EQ(choose_device(fits), DeviceKind::kCuda);
}

TEST(DeviceChoice, NcclWithTwoRanksOnOneDeviceIsRefusedEvenWhenSharing) {
  DeviceQuestion q = machine(1);
  q.world_size = 2;
  q.ddp = true;
  q.backend = comm::Backend::kNccl;
  q.share_gpus = true;
  const std::string why = refusal(q);
  EXPECT_NE(why.find("refuses two ranks on one GPU"), std::string::npos) << why;
  EXPECT_NE(why.find("--backend gloo --share-gpus"), std::string::npos) << why;
  q.world_size = 1;
  EXPECT_EQ(choose_device(q), DeviceKind::kCuda);
}

TEST(DeviceChoice, AnExternalLauncherMaySpanNodesSoRanksAreNotCountedHere) {
  DeviceQuestion q = machine(1);
  q.world_size = 16;
  q.ddp = true;
  q.backend = comm::Backend::kNccl;
  q.self_launched = false;
  EXPECT_EQ(choose_device(q), DeviceKind::kCuda);
}

}  // namespace
}  // namespace ddpbench::run
