// check_builder.h — folds compared items (a loss, a tensor, at a step) into one check record: the
// counts, the worst error of the items that are not divergent, the worst item of each kind, and
// the earliest failing item for the first divergence. The check's status is the verdict
// function's (reports/run/verdict.h) of those numbers, never set here by a separate rule. Shared by
// the comparison against the reference (mode_comparison.h) and the zero mode's against ddp
// (ddp_agreement.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "compare/mode_comparison.h"
#include "compare/rounding_floor.h"
#include "reports/run/verdict.h"

namespace ddpbench::compare {

// Where an item sits in a run: earlier items sort first. `stage` is the part of the step that
// computed it (reports::StepPart, a column of Note [One row per check]); final-state items come
// after every step.
struct ItemOrder {
  int64_t step = 0;  // final-state items: after every step
  reports::StepPart stage = reports::StepPart::kLoss;
  int64_t position = 0;  // within the stage
  bool operator<(const ItemOrder& o) const {
    return std::tie(step, stage, position) < std::tie(o.step, o.stage, o.position);
  }
};

inline int64_t step_order(int64_t step) {
  return step < 0 ? std::numeric_limits<int64_t>::max() : step;
}

// The rule one check applies: its measure, and the elementwise tolerance or the limit.
struct Rule {
  reports::Measure measure = reports::Measure::kTolerance;
  Tolerance tolerance;
  double limit = 1.0;  // kTolerance's error is a ratio to the tolerance: within it up to 1
};

inline Rule tolerance_rule(const Tolerance& t) { return {reports::Measure::kTolerance, t, 1.0}; }
inline Rule normalized_rule(double limit) { return {reports::Measure::kNormalized, {}, limit}; }
// Bit for bit: an item's error is 1 when it differs at all, 0 otherwise.
inline Rule exact_rule() { return {reports::Measure::kExact, {}, 0.0}; }

// One compared item: its differences and its error in the check's measure.
struct Item {
  std::string tensor;
  int64_t step = -1;
  double abs_diff = 0, rel_diff = 0;
  double error = 0;        // in the rule's measure; within the rule when <= its limit
  double ref_max_abs = 0;  // kTolerance: max |ref| of the item
  // The limit its measured rounding floor allows (rounding_floor.h's floor_limit, in the rule's
  // measure); 0 or the rule's limit: no floor raises it.
  double floor_limit = 0;
};

// Accumulates per-item results into one check: counts, the worst error of the items that are
// not divergent, the worst item of each kind (failing, divergent, any) for the record, and the
// earliest failing item for the first divergence. The status is the verdict function's
// (reports/run/verdict.h) of the numbers, never set here by a separate rule.
class CheckBuilder {
 public:
  // Its items sort within a step where `name`'s row says (Note [One row per check]).
  CheckBuilder(reports::Stage name, Rule rule, const std::vector<DivergenceRule>& rules)
      : name_(name), stage_(reports::spec_of(name).part), rule_(rule), rules_(rules) {}

  void add(Item item, int64_t position = 0) {
    if (!(item.error <= rule_.limit) && std::isfinite(item.error) &&
        item.floor_limit == kUnresolved) {
      // The run's precision cannot resolve it (Note [Rounding floor measured on the model]), so
      // it is neither compared nor passed.
      if (incomparable_ == 0 || item.error > first_incomparable_.error) first_incomparable_ = item;
      ++incomparable_;
      return;
    }
    ++items_;
    if (item.step >= 0 && reports::spec_of(name_).per_step) steps_.insert(item.step);
    ref_max_abs_ = std::max(ref_max_abs_, item.ref_max_abs);
    keep_worse(worst_any_, item);
    if (!(item.error <= rule_.limit) && item.floor_limit > rule_.limit &&
        item.error <= item.floor_limit) {
      // Within the limit its floor allows (Note [Rounding floor measured on the model]). Its
      // error is kept in the fixed limit's units (error x limit / floor limit, so <= limit), and
      // the worst such item by what it was held to is recorded with its own figures.
      const double held = item.error / item.floor_limit;
      if (floored_ == 0 || held > worst_floored_.error / worst_floored_.floor_limit) {
        worst_floored_ = item;
      }
      ++floored_;
      item.error = held * rule_.limit;
    }
    const bool ok = item.error <= rule_.limit;  // NaN is not ok
    if (ok) {
      error_ = std::max(error_, item.error);
      return;
    }
    if (const DivergenceRule* r = match(item.tensor)) {
      ++divergent_;
      reason_ = r->reason;
      keep_worse(worst_divergent_, item);
      return;
    }
    ++failures_;
    error_ = std::isnan(item.error) ? INFINITY : std::max(error_, item.error);
    keep_worse(worst_failure_, item);
    const ItemOrder order{step_order(item.step), stage_, position};
    if (failures_ == 1 || order < first_order_) {
      first_order_ = order;
      first_failure_ = item;
    }
  }

  reports::CheckRecord build() const {
    const Item& worst = failures_ > 0    ? worst_failure_
                        : divergent_ > 0 ? worst_divergent_
                                         : worst_any_;
    reports::CheckRecord c;
    c.name = name_;
    c.measure = rule_.measure;
    c.atol = rule_.tolerance.atol;
    c.rtol = rule_.tolerance.rtol;
    c.limit = rule_.limit;
    c.items = items_;
    c.outside = failures_;
    c.divergent = divergent_;
    c.error = error_;
    c.ref_max_abs = ref_max_abs_;
    c.max_abs_diff = worst.abs_diff;
    c.max_rel_diff = worst.rel_diff;
    c.tensor = worst.tensor;
    c.step = worst.step;
    if (incomparable_ > 0) {
      c.incomparable = incomparable_;
      c.incomparable_tensor = first_incomparable_.tensor;
      c.incomparable_step = first_incomparable_.step;
    }
    if (floored_ > 0) {
      c.floored = floored_;
      c.floor_tensor = worst_floored_.tensor;
      c.floor_step = worst_floored_.step;
      c.floor_error = worst_floored_.error;
      c.floor_limit = worst_floored_.floor_limit;
    }
    if (divergent_ > 0) c.detail = reason_;
    c.steps_compared.assign(steps_.begin(), steps_.end());
    c.status = reports::check_status(c, {});
    return c;
  }

  int64_t items() const { return items_; }
  reports::Stage name() const { return name_; }
  double limit() const { return rule_.limit; }

  // Keeps this check's earliest failure in `first` when it is earlier than what `first` holds.
  void offer_first_failure(std::optional<ItemOrder>& order,
                           reports::DivergenceRecord& first) const {
    if (failures_ == 0 || (order && !(first_order_ < *order))) return;
    order = first_order_;
    first.stage = name_;
    first.step = first_failure_.step;
    first.tensor = first_failure_.tensor;
    first.error = first_failure_.abs_diff;
    first.measure = rule_text();
  }

 private:
  std::string rule_text() const {
    reports::CheckRecord c;
    c.measure = rule_.measure;
    c.atol = rule_.tolerance.atol;
    c.rtol = rule_.tolerance.rtol;
    c.limit = rule_.limit;
    return reports::describe_rule(c);
  }

  static void keep_worse(Item& keep, const Item& item) {
    if (keep.tensor.empty() || item.abs_diff > keep.abs_diff || std::isnan(item.abs_diff)) {
      keep = item;
    }
  }

  const DivergenceRule* match(const std::string& tensor) const {
    for (const auto& r : rules_) {
      if (std::regex_search(tensor, std::regex(r.pattern))) return &r;
    }
    return nullptr;
  }

  reports::Stage name_;
  reports::StepPart stage_;
  Rule rule_;
  const std::vector<DivergenceRule>& rules_;
  Item worst_any_, worst_divergent_, worst_failure_, first_failure_, worst_floored_;
  Item first_incomparable_;  // the incomparable item furthest beyond the limit
  std::set<int64_t> steps_;  // the steps of the compared items (a per-step check's)
  ItemOrder first_order_;
  int64_t items_ = 0, failures_ = 0, divergent_ = 0, floored_ = 0, incomparable_ = 0;
  double error_ = 0.0, ref_max_abs_ = 0.0;
  std::string reason_;
};

}  // namespace ddpbench::compare
