// straggler.h — which rank the others wait for, from every rank's compute time per timed step
// (the step less its wait for outstanding gradient collectives). No torch.
//
// Note [Stragglers]:
// A data-parallel step is as slow as its slowest rank: the others wait for its gradients. Each
// rank is scored against the fastest rank (its median compute over the fastest rank's) and against
// its own best step (its median over its minimum), as NVIDIA's resiliency-ext scores each rank's
// step sections against the best rank. A rank is named the straggler when it is consistently
// slower, by this rule, stated in reports/METRICS.md with the runs that set it:
//   - at least kMinSteps timed steps and two ranks;
//   - it computes longest in at least kSlowestShare of the steps;
//   - its median compute exceeds every other rank's by at least kMargin of that rank's;
//   - what it costs the step (the median over the steps of how much longer it computes than the
//     next slowest rank: the time every other rank waits for it) is at least kMinCostShare of its
//     own median compute.
// A rank can only be seen where its peers' waiting lands in comm_wait: DDP's waits for its bucket
// allreduces do, and ZeRO stages 1 and 2's; a wait inside a blocking collective (stage 3's
// parameter all-gathers in forward, SyncBN's exchange) counts as compute on every rank and hides
// the straggler, which is then not named rather than named wrongly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ddpbench::stats {

struct StragglerScores {
  int64_t rank = -1;                // the straggler; -1 when none is named
  double cost_s = 0;                // what it adds to the step (median), when named
  int64_t slowest_steps = 0;        // steps in which it computed longest, when named
  std::vector<double> vs_fastest;   // per rank: median compute / the fastest rank's median
  std::vector<double> vs_own_best;  // per rank: median compute / its own fastest step
  std::string summary;  // one sentence: who, by how much, what it cost; "" for fewer than 2 ranks
};

inline constexpr int64_t kMinSteps = 5;
inline constexpr double kSlowestShare = 0.75;
inline constexpr double kMargin = 0.10;
inline constexpr double kMinCostShare = 0.05;

// `compute_s[r][s]`: rank r's compute at timed step s (every rank the same number of steps).
StragglerScores straggler_scores(const std::vector<std::vector<double>>& compute_s);

}  // namespace ddpbench::stats
