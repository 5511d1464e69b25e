// allreduce_model.h — the alpha-beta (Hockney) cost of one allreduce of S bytes over n devices:
// T(n, S) = latency_steps(n) * alpha + byte_factor(n) * S * beta, alpha the per-message latency
// and beta = 1 / B the seconds per byte of a link. The coefficients per algorithm and where they
// come from: reports/METRICS.md, "Projection". Pure arithmetic, no torch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ddpbench::projection {

enum class AllreduceAlgo { kRing, kTree };
// Every algorithm, the default first: `project --algo`'s choices.
inline constexpr AllreduceAlgo kAllreduceAlgos[] = {AllreduceAlgo::kRing, AllreduceAlgo::kTree};

std::string algo_name(AllreduceAlgo algo);
std::optional<AllreduceAlgo> algo_from_name(const std::string& name);
// The formula in words, for reports ("2(n-1) alpha + 2(n-1)/n S/B").
std::string algo_formula(AllreduceAlgo algo);

// A link: per-message latency and seconds per byte.
struct LinkParams {
  double alpha_s = 0;
  double beta_s_per_byte = 0;
};

// Gbit/s as seconds per byte (8 bits a byte, 1e9 bits a Gbit).
double beta_from_gbit_s(double gbit_per_s);

// The coefficients of alpha and of S * beta for n devices; both 0 for n = 1 (nothing to send).
struct AllreduceCoefficients {
  double latency_steps = 0;
  double byte_factor = 0;
};
AllreduceCoefficients allreduce_coefficients(AllreduceAlgo algo, int64_t n);

double allreduce_seconds(AllreduceAlgo algo, int64_t n, double bytes, const LinkParams& link);

// What of an allreduce is not hidden behind backward: max(0, T - window).
double exposed_comm_seconds(double allreduce_s, double overlap_window_s);

}  // namespace ddpbench::projection
