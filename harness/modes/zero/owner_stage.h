// owner_stage.h — what ZeRO stages 1 and 2 share (PyTorch's ZeroRedundancyOptimizer): each
// rank's optimizer holds only the parameters it owns (zero_partition.h) and steps them; every
// parameter is then broadcast from its owner, one broadcast per owner of the owner's parameters
// as they lie in one flat buffer (sharded_optimizer.h's pack_by_owner). How the gradients reach
// the owners is each stage's own.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "modes/zero/zero_stage.h"

namespace ddpbench::modes::zero {

class OwnerStage : public ZeroStage {
 public:
  // Packs each owner's parameters into one flat buffer.
  explicit OwnerStage(ZeroShared& shared);

  std::vector<at::Tensor> optimizer_parameters() const override;
  void after_step(bool gather_fault) override;
  int64_t first_owned_parameter() const override;

 private:
  std::vector<at::Tensor> packed_;  // each owner's parameters, flat (pack_by_owner)
};

}  // namespace ddpbench::modes::zero
