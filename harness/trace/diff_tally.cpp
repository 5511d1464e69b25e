// diff_tally.cpp — see diff_tally.h.
#include "trace/diff_tally.h"

#include <algorithm>
#include <cmath>

namespace ddpbench::trace {
namespace {

using reports::DiffClass;
using reports::TensorDifference;

// Every difference is kept for diff.json up to this many; the counts cover all of them.
constexpr size_t kMaxListed = 20000;

}  // namespace

DiffTally::DiffTally(const std::string& mode, reports::DiffRecord& record) : r_(record) {
  map_.mode = mode;
}

void DiffTally::note(const TensorDifference& d) {
  if (!r_.first_difference) r_.first_difference = d;
  if (d.cls == DiffClass::kDiverged && !r_.first_divergence) r_.first_divergence = d;
  if (r_.differences.size() < kMaxListed) r_.differences.push_back(d);
}

void DiffTally::count(const TensorDifference& d) {
  reports::StepSpread& s = spread_[d.step];
  s.mode = d.mode;
  s.step = d.step;
  ++r_.compared;
  ++s.compared;
  switch (d.cls) {
    case DiffClass::kIdentical:
      ++r_.identical;
      ++s.identical;
      return;
    case DiffClass::kRounding:
      ++r_.rounding;
      ++s.rounding;
      break;
    case DiffClass::kGrowth:
      ++r_.growth;
      ++s.growth;
      break;
    case DiffClass::kDiverged:
      ++r_.diverged;
      ++s.diverged;
      break;
  }
  if (d.error > s.worst_error || s.worst_tensor.empty()) {
    s.worst_error = d.error;
    s.worst_tensor = d.phase + " " + d.tensor;
  }
}

void DiffTally::place(int64_t step, const TensorDifference& d) {
  const std::string row = d.phase + " " + d.tensor;
  if (!rows_.count(row)) {
    rows_[row] = map_.rows.size();
    map_.rows.push_back(row);
    map_.cells.emplace_back();
    map_.classes.emplace_back();
  }
  if (!columns_.count(step)) {
    columns_[step] = map_.steps.size();
    map_.steps.push_back(step);
  }
  const size_t ri = rows_[row], ci = columns_[step];
  map_.cells[ri].resize(map_.steps.size());
  map_.classes[ri].resize(map_.steps.size());
  if (d.cls != DiffClass::kIdentical) {
    map_.cells[ri][ci] = std::isfinite(d.error) ? std::log10(std::max(d.error, 1e-300)) : 300.0;
  }
  map_.classes[ri][ci] = d.cls;
}

void DiffTally::unmatched(const TensorDifference& d) {
  ++r_.unmatched;
  ++r_.compared;
  ++r_.diverged;
  note(d);
}

void DiffTally::finish() {
  for (auto& row : map_.cells) row.resize(map_.steps.size());
  for (auto& row : map_.classes) row.resize(map_.steps.size());
  for (auto& [step, s] : spread_) r_.spread.push_back(s);
  r_.maps.push_back(std::move(map_));
}

}  // namespace ddpbench::trace
