// unit_gathers.h — stage 3's all-gathers before a forward, one per sharding unit
// (scenarios/models/shard_units.h: ResNet's blocks; the root holds the rest), prefetched: every
// unit's gather is started before the forward, in unit order (the same on every rank, whatever
// the forward reaches), the root's is waited for at once, and each block's only when the forward
// enters it, so the gathers of the later blocks run while the earlier ones compute. What the
// forward did not reach is waited for once it ends. A model without units gathers once, before
// the forward.
//
// Why every unit at once rather than FSDP2's one unit ahead: the full parameters are held from
// the forward to the end of backward (reshard_after_forward=False), so starting them all costs
// no memory that the end of the forward does not hold anyway, and ResNet's largest parameters
// (layer4) are gathered while its early, compute-heavy blocks run. Measured on cifar_resnet18 at
// 2 ranks (CPU, gloo): forward 57-59 ms against 60-64 ms one unit ahead (reports/METRICS.md).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "modes/zero/dim0_shards.h"
#include "scenarios/models/shard_units.h"

namespace torch::nn {
class Module;
}

namespace ddpbench::modes::zero {

// Each parameter's unit, for Dim0Shards: 0 for the root (a parameter in no unit), k + 1 for one
// under the k-th unit of the model that holds a trained parameter. `listener_unit` maps each of
// the model's units (shard_unit_paths' order) to its number here, -1 where it holds none.
struct ParameterUnits {
  std::vector<int64_t> unit_of;
  std::vector<int64_t> listener_unit;
};
ParameterUnits parameter_units(torch::nn::Module& module, const std::vector<std::string>& names);

class UnitGathers : public scenarios::models::UnitListener {
 public:
  // Listens to `module`'s units while it lives. `gathered(unit)`: called once a unit's full
  // parameters are set.
  UnitGathers(Dim0Shards& shards, torch::nn::Module& module, std::vector<int64_t> listener_unit,
              std::function<void(int64_t)> gathered);
  ~UnitGathers() override;
  UnitGathers(const UnitGathers&) = delete;
  UnitGathers& operator=(const UnitGathers&) = delete;

  // Collective, before a forward: every unit's gather started, the root's finished. `stale`: as
  // Dim0Shards::gather's, kept until finish().
  void begin(const std::vector<at::Tensor>* stale);
  // From the forward: the gathers through this unit's finished.
  void entering(int64_t unit) override;
  // Collective, after the forward: every unit gathered.
  void finish();

 private:
  // The units' gathers through `last` finished, in order.
  void finish_through(int64_t last);

  Dim0Shards& shards_;
  torch::nn::Module& module_;
  std::vector<int64_t> listener_unit_;
  std::function<void(int64_t)> gathered_;
  const std::vector<at::Tensor>* stale_ = nullptr;
  bool active_ = false;
  int64_t finished_ = 0;  // units finished this forward
  std::deque<Dim0Shards::PendingGather> pending_;
};

}  // namespace ddpbench::modes::zero
