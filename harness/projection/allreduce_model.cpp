// allreduce_model.cpp — see allreduce_model.h.
#include "projection/allreduce_model.h"

#include <algorithm>
#include <cmath>

namespace ddpbench::projection {

std::string algo_name(AllreduceAlgo algo) { return algo == AllreduceAlgo::kRing ? "ring" : "tree"; }

std::optional<AllreduceAlgo> algo_from_name(const std::string& name) {
  if (name == "ring") return AllreduceAlgo::kRing;
  if (name == "tree") return AllreduceAlgo::kTree;
  return std::nullopt;
}

std::string algo_formula(AllreduceAlgo algo) {
  return algo == AllreduceAlgo::kRing ? "T = 2(n-1) alpha + 2(n-1)/n S/B"
                                      : "T = 2 ceil(log2 n) alpha + 2 S/B";
}

double beta_from_gbit_s(double gbit_per_s) { return 8.0 / (gbit_per_s * 1e9); }

AllreduceCoefficients allreduce_coefficients(AllreduceAlgo algo, int64_t n) {
  if (n <= 1) return {};
  const double nd = static_cast<double>(n);
  if (algo == AllreduceAlgo::kRing) {
    // Reduce-scatter then allgather around the ring: n-1 steps each, every step moving S/n bytes
    // (Thakur, Rabenseifner & Gropp 2005; Patarasuk & Yuan 2009).
    return {2 * (nd - 1), 2 * (nd - 1) / nd};
  }
  // Reduce up a binary tree, broadcast down it: ceil(log2 n) levels each way (Thakur et al.'s
  // binomial-tree step count). Pipelined as NCCL's double binary trees are, each direction moves
  // the whole S once through every link (NCCL 2.4 announcement, Jeaugey 2019): 2 S / B.
  return {2 * std::ceil(std::log2(nd)), 2};
}

double allreduce_seconds(AllreduceAlgo algo, int64_t n, double bytes, const LinkParams& link) {
  const AllreduceCoefficients c = allreduce_coefficients(algo, n);
  return c.latency_steps * link.alpha_s + c.byte_factor * bytes * link.beta_s_per_byte;
}

double exposed_comm_seconds(double allreduce_s, double overlap_window_s) {
  return std::max(0.0, allreduce_s - overlap_window_s);
}

}  // namespace ddpbench::projection
