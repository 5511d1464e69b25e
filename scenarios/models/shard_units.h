// shard_units.h — the built-in models' sharding units: the modules a sharded mode gathers and
// frees as one, as FSDP2 users call fully_shard on each block and then on the root (ResNet's
// BasicBlocks; the parameters outside every unit belong to the root). A unit's forward announces
// itself first (ProbedModule::entering), which is what a forward pre-hook gives FSDP2: libtorch's
// C++ modules have none. A model without units (the small built-ins, TorchScript models) is one
// unit, the root.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}

namespace ddpbench::scenarios::models {

// Told when a unit's forward begins.
class UnitListener {
 public:
  virtual ~UnitListener() = default;
  // `unit`: its index in shard_unit_paths' order.
  virtual void entering(int64_t unit) = 0;
};

// The units' module paths in `root`'s tree ("layer1.0"), in registration order, which is the
// order the built-in models' forwards reach them.
std::vector<std::string> shard_unit_paths(torch::nn::Module& root);

// Attaches `listener` to every unit in `root`'s tree, numbered as shard_unit_paths numbers them
// (null detaches).
void attach_unit_listener(torch::nn::Module& root, UnitListener* listener);

}  // namespace ddpbench::scenarios::models
