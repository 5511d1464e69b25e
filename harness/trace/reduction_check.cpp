// reduction_check.cpp — see reduction_check.h.
#include "trace/reduction_check.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <numeric>

#include "compare/tensor_diff.h"

namespace ddpbench::trace {
namespace {

// Up to this many ranks every summation tree is computed (15 at 4 ranks, 105 at 5).
constexpr int64_t kEveryTreeUpTo = 4;

// The spacing of `dtype`'s values at each element's magnitude (float64 in and out).
at::Tensor spacing_of(const at::Tensor& magnitude, at::ScalarType dtype) {
  return at::exp2(at::floor(at::log2(magnitude.clamp_min(DBL_MIN)))) * compare::epsilon_of(dtype);
}

// Every value a summation tree over the ranks in `mask` can give, each partial sum rounded to
// the terms' dtype: the leaves, or a tree's two subtrees added (the lowest rank always on the
// left, so each unordered split is taken once; addition commutes).
class TreeSums {
 public:
  explicit TreeSums(const std::vector<at::Tensor>& terms) : terms_(terms) {}

  const std::vector<at::Tensor>& of(unsigned mask) {
    const auto found = memo_.find(mask);
    if (found != memo_.end()) return found->second;
    std::vector<at::Tensor> out;
    if ((mask & (mask - 1)) == 0) {
      out.push_back(terms_[static_cast<size_t>(__builtin_ctz(mask))]);
    } else {
      const unsigned low = mask & (~mask + 1);
      // Every split of `mask` into a part holding its lowest rank and a nonempty rest.
      for (unsigned left = (mask - 1) & mask; left != 0; left = (left - 1) & mask) {
        if ((left & low) == 0) continue;
        const unsigned right = mask & ~left;
        for (const at::Tensor& a : of(left)) {
          for (const at::Tensor& b : of(right)) out.push_back(a + b);
        }
      }
    }
    return memo_.emplace(mask, std::move(out)).first->second;
  }

 private:
  const std::vector<at::Tensor>& terms_;
  std::map<unsigned, std::vector<at::Tensor>> memo_;
};

// Sums of `terms` in the orders a many-rank algorithm is likely to take (reduction_check.h).
std::vector<at::Tensor> listed_order_sums(const std::vector<at::Tensor>& terms) {
  const auto w = static_cast<int64_t>(terms.size());
  std::vector<at::Tensor> out;
  const auto in_order = [&terms](const std::vector<int64_t>& order) {
    at::Tensor s = terms[static_cast<size_t>(order[0])];
    for (size_t i = 1; i < order.size(); ++i) s = s + terms[static_cast<size_t>(order[i])];
    return s;
  };
  const auto pairwise = [&terms](std::vector<int64_t> order) {
    std::vector<at::Tensor> level;
    for (int64_t r : order) level.push_back(terms[static_cast<size_t>(r)]);
    while (level.size() > 1) {
      std::vector<at::Tensor> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2) next.push_back(level[i] + level[i + 1]);
      if (level.size() % 2 == 1) next.push_back(level.back());
      level = std::move(next);
    }
    return level.front();
  };
  std::vector<int64_t> order(static_cast<size_t>(w));
  std::iota(order.begin(), order.end(), 0);
  for (int64_t start = 0; start < w; ++start) {  // rotations: a ring's chunks
    std::vector<int64_t> rotated(order.begin() + start, order.end());
    rotated.insert(rotated.end(), order.begin(), order.begin() + start);
    out.push_back(in_order(rotated));
  }
  out.push_back(in_order(std::vector<int64_t>(order.rbegin(), order.rend())));
  out.push_back(pairwise(order));
  int bits = 0;
  while ((int64_t{1} << bits) < w) ++bits;
  std::vector<int64_t> reversed;
  for (int64_t i = 0; i < (int64_t{1} << bits); ++i) {
    int64_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1) << (bits - 1 - b);
    if (r < w) reversed.push_back(r);
  }
  out.push_back(pairwise(reversed));
  return out;
}

std::vector<at::Tensor> order_sums(const std::vector<at::Tensor>& terms) {
  if (static_cast<int64_t>(terms.size()) <= kEveryTreeUpTo) {
    TreeSums trees(terms);
    return trees.of((1u << terms.size()) - 1);
  }
  return listed_order_sums(terms);
}

ReductionCheck check_fingerprint(const ReductionInputs& in) {
  ReductionCheck c;
  c.measured = true;
  const auto w = static_cast<double>(in.contributions.size());
  const auto d = static_cast<double>(in.divisor);
  double exact = 0, l1 = 0;
  for (const at::Tensor& t : in.contributions) {
    const at::Tensor f = t.to(at::kDouble);
    exact += f[0].item<double>();
    l1 += f[1].item<double>();
  }
  exact /= d;
  const at::Tensor r = in.reduced.to(at::kDouble);
  const double u_wire = compare::epsilon_of(in.wire) / 2;
  const double u_run = compare::epsilon_of(at::kFloat) / 2;
  const double bound =
      2 * ((w - 1) * u_wire * l1 / d + (u_wire + u_run) * r[1].item<double>()) + 1e-300;
  const double off = std::abs(r[0].item<double>() - exact);
  c.valid = off <= bound;
  c.outside_ulps = off / bound;  // the ratio to the bound: <= 1 valid
  c.range_ulps = 1;
  c.outside = off / std::max(r[3].item<double>(), 1e-300);
  c.range = bound / std::max(r[3].item<double>(), 1e-300);
  c.how = fmt::format(
      "fingerprints: the reduced sum against sum_r sum(c_r) / {}, within twice what any order of "
      "{} terms rounds it by",
      in.divisor, in.contributions.size());
  return c;
}

}  // namespace

ReductionCheck check_reduction(const ReductionInputs& in) {
  ReductionCheck c;
  if (in.contributions.empty() || !in.reduced.defined() || in.divisor < 1) return c;
  for (const at::Tensor& t : in.contributions) {
    if (!t.defined() || t.sizes() != in.reduced.sizes()) return c;
  }
  if (in.fingerprint) return check_fingerprint(in);
  const at::ScalarType run = in.reduced.scalar_type();
  if (!at::isFloatingType(run)) return c;
  const auto d = static_cast<double>(in.divisor);
  // Where the average's scaling happens on the way from a rank's gradient to the reduced one
  // (reduction_check.h): before the cast to the wire dtype, after it (before the sum), after the
  // sum, or after the cast back; and how: a division by D (FSDP, a compression hook's div_), or a
  // multiplication by 1/D rounded to the tensor's dtype (PyTorch's Reducer, ddpbench's engine),
  // whose product a low precision computes in float32. Without a compression hook the first two
  // and the last two places coincide.
  enum Place { kBeforeCast, kAfterCast, kAfterSum, kAfterCastBack };
  const auto scaled = [d](const at::Tensor& x, int how) {
    if (how == 0) return x / d;
    if (how == 1) return x * at::scalar_tensor(1.0 / d, x.scalar_type());
    return (x.to(at::kFloat) * static_cast<float>(1.0 / d)).to(x.scalar_type());
  };
  std::vector<at::Tensor> results;
  const bool compressed = in.wire != run;
  const int hows = compressed || run == at::kHalf || run == at::kBFloat16 ? 3 : 2;
  for (Place place : {kBeforeCast, kAfterCast, kAfterSum, kAfterCastBack}) {
    if (!compressed && (place == kAfterCast || place == kAfterCastBack)) continue;
    for (int how = 0; how < hows; ++how) {
      std::vector<at::Tensor> terms;
      for (const at::Tensor& t : in.contributions) {
        const at::Tensor x = t.to(run);
        terms.push_back(place == kBeforeCast  ? scaled(x, how).to(in.wire)
                        : place == kAfterCast ? scaled(x.to(in.wire), how)
                                              : x.to(in.wire));
      }
      for (const at::Tensor& sum : order_sums(terms)) {
        const at::Tensor out = place == kAfterSum        ? scaled(sum, how).to(run)
                               : place == kAfterCastBack ? scaled(sum.to(run), how)
                                                         : sum.to(run);
        results.push_back(out.to(at::kDouble));
        ++c.orders;
      }
    }
  }
  at::Tensor low = results.front().clone(), high = results.front().clone();
  for (const at::Tensor& r : results) {
    low = at::minimum(low, r);
    high = at::maximum(high, r);
  }
  at::Tensor exact = at::zeros_like(low);
  for (const at::Tensor& t : in.contributions) exact = exact + t.to(at::kDouble);
  exact = exact / d;
  const at::Tensor width = high - low;
  // Beyond the orders computed exhaustively, an algorithm may take one the list misses.
  const at::Tensor slack = static_cast<int64_t>(in.contributions.size()) <= kEveryTreeUpTo
                               ? at::zeros_like(width)
                               : width;
  const at::Tensor r = in.reduced.to(at::kDouble);
  const at::Tensor outside =
      at::maximum(at::maximum(low - slack - r, r - high - slack), at::zeros_like(r));
  // NaN or inf where the orders give something finite is outside every order.
  const at::Tensor broken = r.isfinite().logical_not().logical_and(high.isfinite());
  const at::Tensor ulp = spacing_of(r.abs(), run);
  const double largest = r.numel() > 0 ? r.abs().nan_to_num(0, 0, 0).max().item<double>() : 0.0;
  c.measured = true;
  c.valid = outside.max().item<double>() == 0 && !broken.any().item<bool>();
  c.outside_ulps = broken.any().item<bool>() ? INFINITY : (outside / ulp).max().item<double>();
  c.range_ulps = (width / ulp).max().item<double>();
  c.exact_ulps = ((r - exact).abs() / ulp).nan_to_num(INFINITY).max().item<double>();
  c.outside = largest > 0 ? outside.max().item<double>() / largest : 0.0;
  c.range = largest > 0 ? width.max().item<double>() / largest : 0.0;
  c.how = fmt::format(
      "{} results of {} ranks' gradients: {} summation order, each with the average's division "
      "or reciprocal before and after the sum{}",
      c.orders, in.contributions.size(),
      static_cast<int64_t>(in.contributions.size()) <= kEveryTreeUpTo ? "every" : "a listed",
      compressed ? fmt::format(", in {}", c10::toString(in.wire)) : "");
  return c;
}

}  // namespace ddpbench::trace
