// phase_times_tensor.cpp — see phase_times_tensor.h.
#include "metrics/phase_times_tensor.h"

#include <ATen/ATen.h>

namespace ddpbench::metrics {

at::Tensor phase_times_to_tensor(const std::vector<PhaseTimes>& times) {
  at::Tensor out = at::empty({static_cast<int64_t>(times.size()), 6}, at::kDouble);
  double* o = out.data_ptr<double>();
  for (const PhaseTimes& t : times) {
    for (double v : {t.data, t.forward, t.backward, t.comm_wait, t.optimizer, t.total}) *o++ = v;
  }
  return out;
}

std::vector<PhaseTimes> phase_times_from_tensor(const at::Tensor& rows) {
  const at::Tensor c = rows.to(at::kDouble).contiguous();
  const double* r = c.data_ptr<double>();
  std::vector<PhaseTimes> out;
  for (int64_t s = 0; s < c.size(0); ++s, r += 6)
    out.push_back({r[0], r[1], r[2], r[3], r[4], r[5]});
  return out;
}

}  // namespace ddpbench::metrics
