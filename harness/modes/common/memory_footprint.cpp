// memory_footprint.cpp — see memory_footprint.h.
#include "modes/common/memory_footprint.h"

#include <sys/resource.h>
#include <torch/torch.h>

#include "scenarios/optim/optimizer_state.h"

namespace ddpbench::modes {
namespace {

int64_t bytes_of(const at::Tensor& t) {
  return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0;
}

}  // namespace

MemoryFootprint measure_footprint(const torch::nn::Module& module,
                                  torch::optim::Optimizer& optimizer) {
  MemoryFootprint f;
  for (const at::Tensor& p : module.parameters()) {
    f.parameter_bytes += bytes_of(p);
    f.gradient_bytes += bytes_of(p.grad());
  }
  f.optimizer_state_bytes = scenarios::state_bytes(optimizer);
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) == 0) f.peak_rss_bytes = int64_t{usage.ru_maxrss} * 1024;
  return f;
}

}  // namespace ddpbench::modes
