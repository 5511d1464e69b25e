// forward_probe.cpp — see forward_probe.h.
#include "scenarios/models/forward_probe.h"

#include <torch/nn/module.h>

namespace ddpbench::scenarios::models {

int64_t attach_probe(torch::nn::Module& root, ForwardProbe* probe) {
  int64_t probed = 0;
  for (const auto& item : root.named_modules("", /*include_self=*/true)) {
    auto* module = dynamic_cast<ProbedModule*>(item.value().get());
    if (module == nullptr) continue;
    module->set_probe(probe, item.key());
    ++probed;
  }
  return probed;
}

}  // namespace ddpbench::scenarios::models
