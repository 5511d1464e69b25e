// interconnect_fit.cpp — see interconnect_fit.h. The problem has at most three unknowns, so the
// box constraints are handled exactly by trying every face of the box: each unknown is free, at
// its lower bound or at its upper bound; the free ones are solved by the normal equations; the
// best feasible face is the constrained optimum (the problem is convex).
#include "projection/interconnect_fit.h"

#include <array>
#include <cmath>
#include <limits>

namespace ddpbench::projection {
namespace {

constexpr int kMaxUnknowns = 3;
using Vec = std::array<double, kMaxUnknowns>;

struct Problem {
  std::vector<Vec> rows;  // design matrix: one row per sample
  std::vector<double> y;
  int unknowns = 0;
  Vec lower{};
  Vec upper{};
};

double sum_of_squares(const Problem& p, const Vec& x) {
  double s = 0;
  for (size_t i = 0; i < p.rows.size(); ++i) {
    double r = -p.y[i];
    for (int j = 0; j < p.unknowns; ++j) r += p.rows[i][j] * x[j];
    s += r * r;
  }
  return s;
}

// Solves the free unknowns of one face (state 0 free, 1 lower, 2 upper); false when the free
// columns are collinear or the solution leaves the box.
bool solve_face(const Problem& p, const std::array<int, kMaxUnknowns>& state, Vec& x) {
  std::array<int, kMaxUnknowns> free_index{};
  int n_free = 0;
  for (int j = 0; j < p.unknowns; ++j) {
    if (state[j] == 0) {
      free_index[n_free++] = j;
    } else {
      x[j] = state[j] == 1 ? p.lower[j] : p.upper[j];
    }
  }
  if (n_free == 0) return true;
  // Columns scaled to unit norm: alpha's coefficients are ~1, beta's are bytes (~1e5 and more).
  Vec scale{};
  for (int a = 0; a < n_free; ++a) {
    double norm = 0;
    for (const Vec& row : p.rows) norm += row[free_index[a]] * row[free_index[a]];
    if (norm == 0) return false;
    scale[a] = 1 / std::sqrt(norm);
  }
  double gram[kMaxUnknowns][kMaxUnknowns + 1] = {};
  for (size_t i = 0; i < p.rows.size(); ++i) {
    double target = p.y[i];
    for (int j = 0; j < p.unknowns; ++j) {
      if (state[j] != 0) target -= p.rows[i][j] * x[j];
    }
    for (int a = 0; a < n_free; ++a) {
      const double ca = p.rows[i][free_index[a]] * scale[a];
      for (int b = 0; b < n_free; ++b) gram[a][b] += ca * p.rows[i][free_index[b]] * scale[b];
      gram[a][n_free] += ca * target;
    }
  }
  // Gaussian elimination with partial pivoting on the (at most 3 x 3) normal equations.
  for (int col = 0; col < n_free; ++col) {
    int pivot = col;
    for (int r = col + 1; r < n_free; ++r) {
      if (std::abs(gram[r][col]) > std::abs(gram[pivot][col])) pivot = r;
    }
    if (std::abs(gram[pivot][col]) < 1e-10) return false;
    for (int c = 0; c <= n_free; ++c) std::swap(gram[col][c], gram[pivot][c]);
    for (int r = 0; r < n_free; ++r) {
      if (r == col) continue;
      const double f = gram[r][col] / gram[col][col];
      for (int c = col; c <= n_free; ++c) gram[r][c] -= f * gram[col][c];
    }
  }
  for (int a = 0; a < n_free; ++a) {
    const int j = free_index[a];
    x[j] = gram[a][n_free] / gram[a][a] * scale[a];
    const double slack = 1e-12 * (1 + std::abs(x[j]));
    if (x[j] < p.lower[j] - slack || x[j] > p.upper[j] + slack) return false;
    x[j] = std::min(std::max(x[j], p.lower[j]), p.upper[j]);
  }
  return true;
}

}  // namespace

int fitted_parameter_count(double max_overlap_fraction) { return max_overlap_fraction > 0 ? 3 : 2; }

InterconnectFit fit_interconnect(AllreduceAlgo algo, const std::vector<CommSample>& samples,
                                 double max_overlap_fraction) {
  Problem p;
  p.unknowns = fitted_parameter_count(max_overlap_fraction);
  const double inf = std::numeric_limits<double>::infinity();
  p.lower = {0, 0, 0};
  p.upper = {inf, inf, max_overlap_fraction};
  for (const CommSample& s : samples) {
    const AllreduceCoefficients c = allreduce_coefficients(algo, s.world_size);
    p.rows.push_back({c.latency_steps, c.byte_factor * s.bytes, -s.backward_s});
    p.y.push_back(s.exposed_s);
  }
  Vec best{};  // every unknown at its lower bound: always feasible
  double best_ss = sum_of_squares(p, best);
  const int faces = p.unknowns == 3 ? 27 : 9;
  for (int face = 0; face < faces; ++face) {
    std::array<int, kMaxUnknowns> state{};
    bool valid = true;
    for (int j = 0, code = face; j < p.unknowns; ++j, code /= 3) {
      state[j] = code % 3;
      // alpha and beta have no upper bound.
      if (state[j] == 2 && !std::isfinite(p.upper[j])) valid = false;
    }
    Vec x{};
    if (!valid || !solve_face(p, state, x)) continue;
    const double ss = sum_of_squares(p, x);
    if (ss < best_ss) best_ss = ss, best = x;
  }
  InterconnectFit fit;
  fit.link = {best[0], best[1]};
  fit.overlap_fraction = p.unknowns == 3 ? best[2] : 0;
  fit.rms_residual_s = samples.empty() ? 0 : std::sqrt(best_ss / samples.size());
  return fit;
}

}  // namespace ddpbench::projection
