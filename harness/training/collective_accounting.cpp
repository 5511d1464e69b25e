// collective_accounting.cpp — see collective_accounting.h.
#include "training/collective_accounting.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)

#include <utility>

#include "reports/run/verdict.h"

namespace ddpbench::training {
namespace {

using comm::FlightOp;

bool in_reduction(modes::StepPhase phase) {
  return phase == modes::StepPhase::kBackward || phase == modes::StepPhase::kCommWait;
}

}  // namespace

void CollectiveAccounting::close_phase() {
  const comm::CollectiveCounts now = comm_.collective_counts();
  if (step_ >= 0 && !steps_.empty()) {
    const comm::CollectiveCounts issued = now - last_;
    steps_.back().total += issued;
    if (in_reduction(phase_)) steps_.back().reduction += issued;
  }
  last_ = now;
}

std::function<void(int64_t, modes::StepPhase)> CollectiveAccounting::observe(
    std::function<void(int64_t, modes::StepPhase)> next) {
  return [this, next = std::move(next)](int64_t step, modes::StepPhase phase) {
    close_phase();
    if (step != step_) {
      steps_.push_back({});
      steps_.back().step = step;
    }
    if (phase == modes::StepPhase::kForward) ++steps_.back().micro_steps;
    step_ = step;
    phase_ = phase;
    if (next) next(step, phase);
  };
}

std::vector<StepCollectives> CollectiveAccounting::finish() {
  close_phase();
  step_ = -1;
  return std::move(steps_);
}

reports::CheckRecord collective_count_check(comm::Communicator& comm,
                                            const std::vector<StepCollectives>& mine,
                                            const ReductionRule& rule) {
  // Per step: this rank's all-reduces and reduce-scatters in the reduction.
  std::vector<int64_t> flat;
  for (const StepCollectives& s : mine) {
    flat.push_back(s.step);
    flat.push_back(s.reduction.of(FlightOp::kAllreduce));
    flat.push_back(s.reduction.of(FlightOp::kReduceScatter));
  }
  const std::vector<at::Tensor> all = comm.allgather(at::tensor(flat, at::kLong));
  const int64_t sync = rule.synchronising_micro_steps;
  // What the rule wants of step `step`, -1 where that kind is not judged.
  const auto want_allreduce = [&](int64_t step) -> int64_t {
    const auto it = rule.allreduce_by_step.find(step);
    if (it != rule.allreduce_by_step.end()) return it->second + rule.allreduce_per_step;
    return rule.allreduce < 0 ? -1 : rule.allreduce * sync + rule.allreduce_per_step;
  };
  const int64_t want_scatter = rule.reduce_scatter < 0 ? -1 : rule.reduce_scatter * sync;
  // A count the rule wants, for the check's detail: "any" where that kind is not judged.
  const auto count_text = [](int64_t want) {
    return want < 0 ? std::string("any") : fmt::format("{}", want);
  };
  reports::CheckRecord c;
  c.name = reports::Stage::kCollectives;
  c.measure = reports::Measure::kExact;
  c.limit = 0;
  std::string first;                  // the first rank and step that differ
  std::vector<std::string> per_step;  // what each step of rank 0's wanted, where steps differ
  for (size_t r = 0; r < all.size(); ++r) {
    const at::Tensor t = all[r].contiguous();
    const int64_t* v = t.data_ptr<int64_t>();
    for (int64_t i = 0; i + 2 < t.numel(); i += 3) {
      ++c.items;
      const int64_t allreduces = want_allreduce(v[i]);
      if (r == 0) per_step.push_back(count_text(allreduces));
      const bool allreduce_ok = allreduces < 0 || v[i + 1] == allreduces;
      const bool scatter_ok = want_scatter < 0 || v[i + 2] == want_scatter;
      if (allreduce_ok && scatter_ok) continue;
      ++c.outside;
      if (!first.empty()) continue;
      c.step = v[i];
      c.tensor = fmt::format("rank {}", r);
      first = fmt::format(
          "rank {} issued {} all-reduce(s) and {} reduce-scatter(s) in step {}'s gradient "
          "reduction, where {} issues {} and {}",
          r, v[i + 1], v[i + 2], v[i], rule.what, count_text(allreduces), count_text(want_scatter));
    }
  }
  // "2" when every step wants the same, "1, 2, 2 (by step)" when they differ.
  std::string allreduces = per_step.empty() ? count_text(want_allreduce(0)) : per_step.front();
  for (const std::string& w : per_step) {
    if (w != per_step.front()) {
      allreduces = fmt::format("{} (by step)", fmt::join(per_step, ", "));
      break;
    }
  }
  const std::string scatters = count_text(want_scatter);
  c.error = c.outside > 0 ? 1.0 : 0.0;
  c.detail = c.outside > 0 ? first
                           : fmt::format(
                                 "every rank issued {} all-reduce(s) and {} reduce-scatter(s) in "
                                 "each step's gradient reduction, as {} must",
                                 allreduces, scatters, rule.what);
  c.status = reports::check_status(c, {});
  return c;
}

std::vector<reports::StepCollectivesRecord> collective_records(
    const std::vector<StepCollectives>& steps) {
  std::vector<reports::StepCollectivesRecord> out;
  for (const StepCollectives& s : steps) {
    reports::StepCollectivesRecord r;
    r.step = s.step;
    r.micro_steps = s.micro_steps;
    r.allreduce = s.total.of(FlightOp::kAllreduce);
    r.reduce_scatter = s.total.of(FlightOp::kReduceScatter);
    r.allgather = s.total.of(FlightOp::kAllgather);
    r.broadcast = s.total.of(FlightOp::kBroadcast);
    for (const int64_t b : s.total.bytes) r.bytes += b;
    r.reduction_allreduce = s.reduction.of(FlightOp::kAllreduce);
    r.reduction_reduce_scatter = s.reduction.of(FlightOp::kReduceScatter);
    for (const int64_t b : s.reduction.bytes) r.reduction_bytes += b;
    out.push_back(r);
  }
  return out;
}

}  // namespace ddpbench::training
