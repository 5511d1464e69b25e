// amp_oracle_e2e_test.cpp — --amp against PyTorch itself (reference/torch_ddp_oracle.py, issue
// 34): ddpbench's ddp and single modes under autocast (and fp16's GradScaler where the build has
// float16 autocast on the CPU) end with the states PyTorch's own DDP and single-device training
// reach on the exported batches.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/amp_e2e_fixture.h"
#include "support/cli_runner.h"

namespace ddpbench {
namespace {
using testing::cpu_fp16_supported;

// PyTorch itself (reference/torch_ddp_oracle.py): torch.autocast around DDP's forward and loss,
// torch.amp.GradScaler for fp16, on the exported batches. Measured bitwise at world 2 (both
// builds, both precisions); the float32 tolerance allows world 3's summation order.
TEST_F(AmpE2E, DdpAgreesWithPythonDdpUnderAutocastAndGradScaler) {
  std::vector<std::string> precisions = {"bf16"};
  if (cpu_fp16_supported()) precisions.push_back("fp16");
  for (const std::string& amp : precisions) {
    // With accumulation (2 micro-steps, no_sync on the first) the oracle runs PyTorch's recipe
    // and must agree to the bit: 4 steps of toy_cnn with 2 or 4 micro-steps end only 2.2e-6
    // apart, inside the default tolerance.
    for (const char* accumulation : {"1", "2"}) {
      const std::string what = amp + " x" + accumulation;
      const std::string dir = path("oracle-" + amp + "-" + accumulation);
      const auto r = oracle_run(amp, "ddp", dir, {"--accumulation-steps", accumulation});
      ASSERT_EQ(r.exit_code, 0) << what << r.out << r.err;
      const auto o =
          testing::python({testing::oracle("torch_ddp_oracle.py"), "--batches", dir + "/batches.pt",
                           "--atol", "0", "--rtol", "0", "--check", dir + "/state_ddp.pt"});
      EXPECT_EQ(o.exit_code, 0) << what << o.out << o.err;
      EXPECT_NE(o.out.find("OK: max |ddpbench - torch DDP| = 0.000e+00"), std::string::npos)
          << what << o.out;
      // fp16 at 2^20: PyTorch's scaler skips the first steps too, so agreeing states mean the
      // same steps were skipped.
      if (amp == "fp16") {
        EXPECT_NE(o.out.find("skipped steps [0"), std::string::npos) << what << o.out;
      }
    }
  }
}

// PyTorch's single-device training (the oracle's --single: the plain model on each global batch
// under torch.autocast, GradScaler for fp16) against ddpbench's single mode, free-running as the
// run's only mode.
TEST_F(AmpE2E, SingleAgreesWithPythonSingleDeviceUnderAutocastAndGradScaler) {
  std::vector<std::string> precisions = {"bf16"};
  if (cpu_fp16_supported()) precisions.push_back("fp16");
  for (const std::string& amp : precisions) {
    const std::string dir = path("oracle-single-" + amp);
    const auto r = oracle_run(amp, "single", dir);
    ASSERT_EQ(r.exit_code, 0) << amp << r.out << r.err;
    const auto o = testing::python({testing::oracle("torch_ddp_oracle.py"), "--single", "--batches",
                                    dir + "/batches.pt", "--check", dir + "/state_single.pt"});
    EXPECT_EQ(o.exit_code, 0) << amp << o.out << o.err;
    EXPECT_NE(o.out.find("OK: max |ddpbench - torch single device|"), std::string::npos) << o.out;
    if (amp == "fp16") {
      EXPECT_NE(o.out.find("skipped steps [0, 1"), std::string::npos) << o.out;
    }
  }
}

}  // namespace
}  // namespace ddpbench
