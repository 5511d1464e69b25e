// unit_gathers.cpp — see unit_gathers.h.
#include "modes/zero/unit_gathers.h"

#include <torch/nn/module.h>

#include <algorithm>

namespace ddpbench::modes::zero {

ParameterUnits parameter_units(torch::nn::Module& module, const std::vector<std::string>& names) {
  const std::vector<std::string> paths = scenarios::models::shard_unit_paths(module);
  std::vector<int64_t> model_unit(names.size(), -1);  // index into paths
  for (size_t i = 0; i < names.size(); ++i) {
    for (size_t u = 0; u < paths.size(); ++u) {
      const std::string prefix = paths[u] + ".";
      // The innermost unit holding it: units may nest.
      if (names[i].rfind(prefix, 0) == 0 &&
          (model_unit[i] < 0 ||
           paths[u].size() > paths[static_cast<size_t>(model_unit[i])].size())) {
        model_unit[i] = static_cast<int64_t>(u);
      }
    }
  }
  ParameterUnits units;
  units.listener_unit.assign(paths.size(), -1);
  int64_t next = 1;
  for (size_t u = 0; u < paths.size(); ++u) {
    if (std::find(model_unit.begin(), model_unit.end(), static_cast<int64_t>(u)) !=
        model_unit.end()) {
      units.listener_unit[u] = next++;
    }
  }
  for (const int64_t u : model_unit) {
    units.unit_of.push_back(u < 0 ? 0 : units.listener_unit[static_cast<size_t>(u)]);
  }
  return units;
}

UnitGathers::UnitGathers(Dim0Shards& shards, torch::nn::Module& module,
                         std::vector<int64_t> listener_unit, std::function<void(int64_t)> gathered)
    : shards_(shards),
      module_(module),
      listener_unit_(std::move(listener_unit)),
      gathered_(std::move(gathered)) {
  scenarios::models::attach_unit_listener(module_, this);
}

UnitGathers::~UnitGathers() { scenarios::models::attach_unit_listener(module_, nullptr); }

void UnitGathers::begin(const std::vector<at::Tensor>* stale) {
  stale_ = stale;
  active_ = true;
  finished_ = 0;
  for (int64_t u = 0; u < shards_.units(); ++u) pending_.push_back(shards_.start_gather(u));
  finish_through(0);
}

void UnitGathers::entering(int64_t unit) {
  if (!active_ || unit < 0 || static_cast<size_t>(unit) >= listener_unit_.size()) return;
  const int64_t mine = listener_unit_[static_cast<size_t>(unit)];
  if (mine < 0) return;  // a unit that trains nothing
  finish_through(mine);
}

void UnitGathers::finish() {
  if (!active_) return;
  finish_through(shards_.units() - 1);
  active_ = false;
  stale_ = nullptr;
}

void UnitGathers::finish_through(int64_t last) {
  for (; finished_ <= last && !pending_.empty(); ++finished_) {
    shards_.finish_gather(pending_.front(), stale_);
    pending_.pop_front();
    gathered_(finished_);
  }
}

}  // namespace ddpbench::modes::zero
