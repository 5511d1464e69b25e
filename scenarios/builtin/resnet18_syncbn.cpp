// resnet18_syncbn.cpp — scenario `resnet18_syncbn`: cifar_resnet18 with every BatchNorm converted
// to SyncBN under DDP. SyncBN normalises with the statistics of the whole global batch, so DDP must
// now reproduce plain single-device training — parameters AND BatchNorm buffers. DataParallel has
// no SyncBN and is judged against the exact reference with per-replica statistics.
#include "scenarios/scenario.h"

namespace ddpbench::scenarios {

ScenarioSpec cifar_resnet18_scenario();  // scenarios/builtin/cifar_resnet18.cpp

ScenarioSpec resnet18_syncbn_scenario() {
  ScenarioSpec s = cifar_resnet18_scenario();
  s.name = "resnet18_syncbn";
  s.summary = "cifar_resnet18 with SyncBN under DDP: must equal single-device, buffers included";
  s.model_name = "resnet18(num_classes=10)+SyncBN";
  s.sync_bn = true;
  // float64 by default: the point of this scenario is a sharp equality check with plain
  // single-device training over free-running steps. In float32 a deep BatchNorm network's
  // trajectories separate within ~3 free-running steps (rounding flips ReLU and max-pool
  // decisions), and even one step can flip a ReLU input near 0, since SyncBN and PyTorch's kernel
  // round the normalisation differently: float32 runs are judged in lockstep against a reference
  // that computes BatchNorm in SyncBN's arithmetic (Note [SyncBN arithmetic reference],
  // modes/common/global_batch_norm.h; 2 ranks, batch 16, seed 1: worst gradient 2.7e-6).
  s.dtype = "float64";
  s.torch_oracle_model.clear();  // PyTorch 1.13's SyncBatchNorm refuses CPU tensors
  return s;
}

}  // namespace ddpbench::scenarios
