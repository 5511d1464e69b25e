// interconnect_fit.h — fits the measured interconnect from measured DDP points: the exposed
// communication (comm_wait) of each point modelled as
//   exposed(m) = latency_steps(m) alpha + byte_factor(m) S beta - f backward(m)
// with alpha >= 0, beta >= 0 and the overlap fraction f in [0, max_overlap_fraction] (0 fixes f:
// one bucket cannot overlap), solved as a box-constrained linear least-squares problem. The
// max(0, .) of the exposed time is left out of the fit (a fully hidden point pulls the line down
// instead of being ignored); reports/METRICS.md says why that is the safer error.
#pragma once

#include <cstdint>
#include <vector>

#include "projection/allreduce_model.h"

namespace ddpbench::projection {

struct CommSample {
  int64_t world_size = 0;
  double bytes = 0;       // allreduced per rank per step
  double backward_s = 0;  // measured backward duration
  double exposed_s = 0;   // measured comm_wait
};

struct InterconnectFit {
  LinkParams link;
  double overlap_fraction = 0;
  double rms_residual_s = 0;  // root mean square of (model - measured) exposed time
};

// The number of parameters the fit has: 2 (alpha, beta), 3 with a free overlap fraction.
int fitted_parameter_count(double max_overlap_fraction);

// Least squares over `samples`; with fewer samples than parameters the answer is one of many
// (the caller must not present it as a validated fit).
InterconnectFit fit_interconnect(AllreduceAlgo algo, const std::vector<CommSample>& samples,
                                 double max_overlap_fraction);

}  // namespace ddpbench::projection
