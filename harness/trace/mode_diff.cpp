// mode_diff.cpp — see mode_diff.h.
#include "trace/mode_diff.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "compare/tensor_diff.h"
#include "trace/diff_tally.h"
#include "trace/reduction_check.h"
#include "trace/tensor_measure.h"

namespace ddpbench::trace {
namespace {

using modes::TraceEntry;
using modes::TracePhase;
using reports::DiffClass;
using reports::TensorDifference;

std::string group_of(const TraceEntry& e) {
  return fmt::format("{}|{}", e.step, modes::trace_phase_name(e.phase));
}

std::string phase_what(TracePhase phase) {
  for (const auto& row : modes::kTracePhases) {
    if (row.phase == phase) return row.what;
  }
  return "?";
}

at::ScalarType wire_of(const ModeEntries& m, at::ScalarType gradients) {
  if (m.wire_dtype == "float16") return at::kHalf;
  if (m.wire_dtype == "bfloat16") return at::kBFloat16;
  return gradients;
}

// What lies upstream of a tensor in its step: nothing that differs, only rounding or growth, or
// a divergence; with the earliest such difference named, for the cause.
struct Upstream {
  enum Level { kNone, kSoft, kHard } level = kNone;
  std::string first;

  void add(const Upstream& o) {
    if (o.level == kNone) return;
    if (first.empty()) first = o.first;
    level = std::max(level, o.level);
  }
  void add(const TensorDifference& d) {
    Upstream u;
    u.level = d.cls == DiffClass::kDiverged ? kHard : kSoft;
    u.first = d.tensor == "loss" ? fmt::format("the loss at step {}", d.step)
                                 : fmt::format("the {} of {} at step {}", d.what, d.tensor, d.step);
    add(u);
  }
};

Upstream operator+(Upstream a, const Upstream& b) {
  a.add(b);
  return a;
}

class ModeWalk {
 public:
  ModeWalk(const ModeEntries& a, const ModeEntries& b, const DiffContext& context,
           reports::DiffRecord& r)
      : a_(a), b_(b), context_(context), r_(r), tally_(a.mode, r) {
    for (const TraceEntry& e : a.entries) in_a_.emplace(key_of(e), &e);
    for (const TraceEntry& e : b.entries) in_b_.emplace(key_of(e), &e);
    // The rounding level of each step's phase: its largest value in either trace.
    for (const auto* side : {&a, &b}) {
      for (const TraceEntry& e : side->entries) {
        double& l = largest_[group_of(e)];
        l = std::max(l, compare::gradient_max_abs(e.value, e.fingerprint));
      }
    }
  }

  void run();

 private:
  void begin_step(int64_t step);
  void judge(const TraceEntry& e, const TraceEntry& other);
  bool judge_reduction(const TraceEntry& e, const TraceEntry& other, TensorDifference& d);
  Upstream upstream_of(const TraceEntry& e) const;
  void after(const TraceEntry& e, const TensorDifference& d);
  void unmatched(const TraceEntry& e, const char* side);
  TensorDifference base(const TraceEntry& e) const;
  std::vector<at::Tensor> contributions(
      const std::unordered_map<std::string, const TraceEntry*>& in,
      const TraceEntry& reduced) const;

  const ModeEntries& a_;
  const ModeEntries& b_;
  const DiffContext& context_;
  reports::DiffRecord& r_;
  std::unordered_map<std::string, const TraceEntry*> in_a_, in_b_;
  std::map<std::string, double> largest_;
  // What differs so far: in the mode, and in the current step by phase.
  Upstream mode_;
  Upstream start_, forward_, loss_, local_, reduced_;
  std::map<std::string, Upstream> contributed_;  // per parameter: a rank's local gradient
  int64_t step_ = -1;
  DiffTally tally_;
};

TensorDifference ModeWalk::base(const TraceEntry& e) const {
  TensorDifference d;
  d.mode = a_.mode;
  d.step = e.step;
  d.phase = modes::trace_phase_name(e.phase);
  d.what = phase_what(e.phase);
  d.tensor = e.rank != 0 ? fmt::format("{} (rank {})", e.tensor, e.rank) : e.tensor;
  return d;
}

void ModeWalk::begin_step(int64_t step) {
  step_ = step;
  forward_ = loss_ = local_ = reduced_ = Upstream{};
  contributed_.clear();
  // Without a digest of where the step started in both (a version 1 trace), anything that
  // differed before may have carried into it.
  TraceEntry digest;
  digest.step = step;
  digest.phase = TracePhase::kStepStart;
  digest.tensor = "state";
  const std::string key = key_of(digest);
  start_ = in_a_.count(key) && in_b_.count(key) ? Upstream{} : mode_;
}

Upstream ModeWalk::upstream_of(const TraceEntry& e) const {
  switch (e.phase) {
    case TracePhase::kStart:
    case TracePhase::kStepStart:
      return {};
    case TracePhase::kForward:
    case TracePhase::kLoss:
    case TracePhase::kBuffer:
      return start_ + forward_;
    case TracePhase::kLocalGradient:
      return start_ + forward_ + loss_;
    case TracePhase::kReducedGradient: {
      const auto it = contributed_.find(e.tensor);
      return start_ + forward_ + loss_ + (it == contributed_.end() ? Upstream{} : it->second);
    }
    case TracePhase::kUpdate:
    case TracePhase::kParameter:
    case TracePhase::kOptimizerState:
      // Clipping by the global norm couples every parameter's update to every gradient.
      return start_ + reduced_;
  }
  return {};
}

std::vector<at::Tensor> ModeWalk::contributions(
    const std::unordered_map<std::string, const TraceEntry*>& in, const TraceEntry& reduced) const {
  std::vector<at::Tensor> out;
  for (int64_t rank = 0;; ++rank) {
    TraceEntry key = reduced;
    key.phase = TracePhase::kLocalGradient;
    key.rank = rank;
    const auto it = in.find(key_of(key));
    if (it == in.end()) break;
    out.push_back(it->second->value);
  }
  return out;
}

// Each trace's reduced gradient against the range every summation order of its own ranks'
// gradients spans (Note [A reduction judged by its own contributions]). False when either trace
// does not hold what that needs (a version 1 trace, dp's replicas).
bool ModeWalk::judge_reduction(const TraceEntry& e, const TraceEntry& other, TensorDifference& d) {
  ReductionInputs in_a{contributions(in_a_, e), e.value, a_.divisor,
                       wire_of(a_, e.value.scalar_type()), e.fingerprint};
  ReductionInputs in_b{contributions(in_b_, other), other.value, b_.divisor,
                       wire_of(b_, other.value.scalar_type()), other.fingerprint};
  if (a_.divisor < 1 || b_.divisor < 1 || e.fingerprint != other.fingerprint) return false;
  const ReductionCheck ca = check_reduction(in_a);
  const ReductionCheck cb = check_reduction(in_b);
  if (!ca.measured || !cb.measured) return false;
  d.held_to = "reduction";
  d.measured_how = ca.how;
  d.range_ulps = std::max(ca.range_ulps, cb.range_ulps);
  d.range = std::max(ca.range, cb.range);
  d.a_outside_ulps = ca.outside_ulps;
  d.b_outside_ulps = cb.outside_ulps;
  d.limit = d.range;
  const char* unit = e.fingerprint ? "x the bound any order reaches" : "ulps";
  if (!ca.valid || !cb.valid) {
    const ReductionCheck& bad = ca.valid ? cb : ca;
    d.cls = DiffClass::kDiverged;
    d.cause = fmt::format(
        "{}'s reduced gradient is no sum its {} ranks' gradients make: {:.3g} {} outside the "
        "range of every summation order of them ({}; Note [A reduction judged by its own "
        "contributions]), as when a rank's gradient is changed after backward, a bucket goes "
        "unreduced or a divisor is wrong",
        ca.valid ? "B" : "A", in_a.contributions.size(), bad.outside_ulps, unit, bad.how);
    return true;
  }
  const Upstream up = upstream_of(e);
  if (up.level != Upstream::kNone) {
    d.cls = up.level == Upstream::kHard ? DiffClass::kDiverged : DiffClass::kGrowth;
    d.cause = fmt::format(
        "follows from the earlier difference in {}: both traces' reduced gradients are valid sums "
        "of their own ranks' gradients",
        up.first);
    return true;
  }
  d.cls = DiffClass::kRounding;
  d.cause = fmt::format(
      "the reduction's summation order: both traces sum the same ranks' gradients, and each "
      "result lies within the range every order of that sum spans (measured: up to {:.3g} {} "
      "wide; {})",
      d.range_ulps, unit, ca.how);
  return true;
}

void ModeWalk::judge(const TraceEntry& e, const TraceEntry& other) {
  TensorDifference d = base(e);
  const at::ScalarType dtype =
      !e.fingerprint && e.value.is_floating_point() ? e.value.scalar_type() : context_.run;
  const double level = compare::rounding_level(largest_[group_of(e)], dtype, context_.limit).level;
  measure(e, other, level, context_.limit, context_.run, update_allowance(e, in_a_, in_b_), d);
  if (d.cls == DiffClass::kIdentical) {
    tally_.count(d);
    tally_.place(e.step, d);
    return;
  }
  const bool structural = !d.cause.empty();  // a dtype or shape that differs: never rounding
  const bool reduction =
      !structural && e.phase == TracePhase::kReducedGradient && judge_reduction(e, other, d);
  if (!structural && !reduction) {
    const Upstream up = upstream_of(e);
    if (up.level != Upstream::kNone) {
      d.cls = up.level == Upstream::kHard ? DiffClass::kDiverged : DiffClass::kGrowth;
      d.held_to = "follows";
      d.cause = fmt::format("follows from the earlier difference in {}", up.first);
    } else {
      d.held_to = "tolerance";
      d.cause = origin_cause(e, a_.mode, context_.world);
    }
  }
  tally_.count(d);
  tally_.note(d);
  tally_.place(e.step, d);
  after(e, d);
}

// What a difference makes differ downstream of it.
void ModeWalk::after(const TraceEntry& e, const TensorDifference& d) {
  mode_.add(d);
  switch (e.phase) {
    case TracePhase::kForward:
      forward_.add(d);
      break;
    case TracePhase::kLoss:
      loss_.add(d);
      break;
    case TracePhase::kLocalGradient:
      local_.add(d);
      contributed_[e.tensor].add(d);
      break;
    case TracePhase::kReducedGradient:
      reduced_.add(d);
      break;
    default:
      break;
  }
}

void ModeWalk::unmatched(const TraceEntry& e, const char* side) {
  TensorDifference d = base(e);
  d.cls = DiffClass::kDiverged;
  d.error = INFINITY;
  d.cause = fmt::format(
      "only trace {} holds this tensor (the traces' models or ddpbench versions record different "
      "tensors)",
      side);
  tally_.unmatched(d);
  mode_.add(d);
}

// What a version 2 trace holds that a version 1 trace lacks: not a difference of the training.
bool newer_only(const TraceEntry& e) {
  return e.phase == TracePhase::kStepStart ||
         (e.phase == TracePhase::kLocalGradient && e.rank != 0);
}

void ModeWalk::run() {
  std::set<std::string> matched;
  const bool versions_differ = (a_.divisor < 1) != (b_.divisor < 1);
  for (const TraceEntry& e : a_.entries) {
    if (e.step != step_) begin_step(e.step);
    const auto it = in_b_.find(key_of(e));
    if (it == in_b_.end()) {
      if (!(versions_differ && newer_only(e))) unmatched(e, "A");
      continue;
    }
    matched.insert(it->first);
    if (e.phase == TracePhase::kStepStart) {
      // Where the step starts: not a tensor the step computed, so not counted; what differs in
      // the step follows from it when it differs.
      if (!same_bytes(e.value, it->second->value)) {
        start_.level = std::max(mode_.level, Upstream::kSoft);
        start_.first = mode_.first.empty()
                           ? fmt::format(
                                 "the state step {} started from (lockstep starts each "
                                 "step from the reference's state, which differs)",
                                 e.step)
                           : mode_.first;
      }
      continue;
    }
    judge(e, *it->second);
  }
  for (const TraceEntry& e : b_.entries) {
    if (matched.count(key_of(e)) || (versions_differ && newer_only(e))) continue;
    unmatched(e, "B");
  }
  if (versions_differ) {
    r_.notes.push_back(fmt::format(
        "mode {}: one trace is of version 1, which holds rank 0's local gradients only: its "
        "reductions are held to the tolerance, not measured",
        a_.mode));
  }
  tally_.finish();
}

}  // namespace

void diff_mode(const ModeEntries& a, const ModeEntries& b, const DiffContext& context,
               reports::DiffRecord& record) {
  ModeWalk(a, b, context, record).run();
}

}  // namespace ddpbench::trace
