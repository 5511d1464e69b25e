// resnet18_syncbn.cpp — scenario `resnet18_syncbn`: cifar_resnet18 with every BatchNorm converted
// to SyncBN under DDP. SyncBN normalises with the statistics of the whole global batch, so DDP must
// now reproduce plain single-device training — parameters AND BatchNorm buffers. DataParallel has
// no SyncBN and is judged against the exact reference with per-replica statistics.
#include "scenarios/builtin.h"

namespace ddpbench::scenarios {

ScenarioSpec resnet18_syncbn_scenario() {
  ScenarioSpec s = cifar_resnet18_scenario();
  s.name = "resnet18_syncbn";
  s.summary = "cifar_resnet18 with SyncBN under DDP: must equal single-device, buffers included";
  s.model_name = "resnet18(num_classes=10)+SyncBN";
  s.sync_bn = true;
  // float64 by default: the point of this scenario is a sharp equality check. In float32 a deep
  // BatchNorm network's single-device and DDP trajectories separate within ~3 steps on CPU (after
  // 2 steps at batch 16 the worst gradient differs by 1e-5, after 3 by 6e-3: rounding flips
  // ReLU and max-pool decisions), so float32 can only be judged over the first two steps.
  s.dtype = "float64";
  // Widened for float32 only, with the measurement that forces it: at batch 16 on 2 ranks the
  // step-1 gradient differs from single-device training by 1e-5 on the machine this scenario was
  // written on and by 3.3e-5 (layer4.1.conv2.weight) on an AMD EPYC CI machine, one intra-op
  // thread per process, while float64 agrees to 5e-14: rounding through 20 BatchNorm layers of 8
  // samples each, not an algorithm error. 1e-4 still catches a 1e-3 gradient error on one rank
  // (~5e-4 after averaging). The lockstep comparison of issue 9 removes the need.
  s.tolerances.gradient_float32 = 1e-4;
  s.torch_oracle_model.clear();  // PyTorch 1.13's SyncBatchNorm refuses CPU tensors
  return s;
}

}  // namespace ddpbench::scenarios
