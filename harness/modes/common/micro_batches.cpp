// micro_batches.cpp — see micro_batches.h.
#include "modes/common/micro_batches.h"

#include <fmt/format.h>

#include "errors.h"

namespace ddpbench::modes {

std::vector<std::vector<int64_t>> split_micro_batches(const std::vector<int64_t>& samples,
                                                      int64_t micro_steps, const std::string& who,
                                                      int64_t step) {
  const auto n = static_cast<int64_t>(samples.size());
  if (micro_steps < 1 || n % micro_steps != 0 || n == 0) {
    throw WorkerFailure(fmt::format(
        "{}: step {}: {} samples do not split into {} equal accumulation micro-batches (the "
        "epoch's last batch is short?): pick --batch-size and --accumulation-steps so every "
        "step's share divides",
        who, step, n, micro_steps));
  }
  const int64_t size = n / micro_steps;
  std::vector<std::vector<int64_t>> out;
  for (int64_t m = 0; m < micro_steps; ++m) {
    out.emplace_back(samples.begin() + m * size, samples.begin() + (m + 1) * size);
  }
  return out;
}

}  // namespace ddpbench::modes
