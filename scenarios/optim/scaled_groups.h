// scaled_groups.h — each parameter group's share of the scheduled learning rate, kept with the
// optimizer that steps the groups (OPTIM.NO_DECAY_LR_SCALE: the no-decay group's multiple), so
// that whatever sets the rates before a step (training_recipe.h set_scheduled_rates) and whatever
// saves them (checkpoints' param_groups) reads one record of which group runs at which share.
// Every optimizer make_optimizer builds (multi_tensor_sgd.h, multi_tensor_adam.h) carries one.
#pragma once

#include <vector>

namespace ddpbench::scenarios {

class ScaledGroups {
 public:
  virtual ~ScaledGroups() = default;
  // In param_groups() order; empty: every group at the scheduled rate.
  const std::vector<double>& lr_scales() const { return lr_scales_; }
  void set_lr_scales(std::vector<double> scales) { lr_scales_ = std::move(scales); }

 private:
  std::vector<double> lr_scales_;
};

}  // namespace ddpbench::scenarios
