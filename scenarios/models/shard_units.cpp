// shard_units.cpp — see shard_units.h.
#include "scenarios/models/shard_units.h"

#include <torch/nn/module.h>

#include "scenarios/models/forward_probe.h"

namespace ddpbench::scenarios::models {
namespace {

// Calls `visit(unit, path, index)` for every unit in `root`'s tree.
template <class Visit>
void for_each_unit(torch::nn::Module& root, Visit&& visit) {
  int64_t index = 0;
  for (const auto& item : root.named_modules("", /*include_self=*/true)) {
    auto* module = dynamic_cast<ProbedModule*>(item.value().get());
    if (module == nullptr || !module->is_shard_unit()) continue;
    visit(*module, item.key(), index++);
  }
}

}  // namespace

void ProbedModule::entering() const {
  if (listener_ != nullptr) listener_->entering(unit_);
}

std::vector<std::string> shard_unit_paths(torch::nn::Module& root) {
  std::vector<std::string> paths;
  for_each_unit(root,
                [&](ProbedModule&, const std::string& path, int64_t) { paths.push_back(path); });
  return paths;
}

void attach_unit_listener(torch::nn::Module& root, UnitListener* listener) {
  for_each_unit(root, [&](ProbedModule& unit, const std::string&, int64_t index) {
    unit.set_unit_listener(listener, listener != nullptr ? index : -1);
  });
}

}  // namespace ddpbench::scenarios::models
