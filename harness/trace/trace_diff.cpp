// trace_diff.cpp — see trace_diff.h.
#include "trace/trace_diff.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "compare/tensor_diff.h"
#include "errors.h"
#include "modes/common/gradient_record.h"
#include "quoted_input.h"

namespace ddpbench::trace {
namespace {

using modes::TraceEntry;
using modes::TracePhase;
using reports::DiffClass;
using reports::TensorDifference;

// Every difference is kept for diff.json up to this many; the counts cover all of them.
constexpr size_t kMaxListed = 20000;

const std::string* field(const Fields& fields, const std::string& name) {
  for (const auto& [k, v] : fields) {
    if (k == name) return &v;
  }
  return nullptr;
}

// A field's value as the refusal shows it: its first differing line, shortened.
std::string shown(const std::string& value, const std::string& other) {
  size_t start = 0;
  while (start < value.size() && start < other.size() && value[start] == other[start]) ++start;
  start = value.rfind('\n', start) == std::string::npos ? 0 : value.rfind('\n', start) + 1;
  std::string line = value.substr(start, value.find('\n', start) - start);
  if (line.size() > 60) line = line.substr(0, 57) + "...";
  return quoted_input(line);
}

void require_same_experiment(const TraceFile& a, const TraceFile& b) {
  std::vector<std::string> names;
  for (const auto& [k, v] : a.experiment) names.push_back(k);
  for (const auto& [k, v] : b.experiment) {
    if (field(a.experiment, k) == nullptr) names.push_back(k);
  }
  for (const std::string& name : names) {
    const std::string* va = field(a.experiment, name);
    const std::string* vb = field(b.experiment, name);
    if (va != nullptr && vb != nullptr && *va == *vb) continue;
    const std::string absent = "(absent)";
    throw InputError(fmt::format(
        "diff: the traces are of different experiments: {} is {} in A and {} in B; diff compares "
        "one experiment under two environments: run both with the same {}",
        name, va ? shown(*va, vb ? *vb : "") : absent, vb ? shown(*vb, va ? *va : "") : absent,
        name));
  }
}

std::vector<reports::EnvironmentField> side_by_side(const Fields& a, const Fields& b) {
  std::vector<reports::EnvironmentField> out;
  for (const auto& [k, v] : a) {
    const std::string* other = field(b, k);
    out.push_back({k, v, other ? *other : "(absent)"});
  }
  for (const auto& [k, v] : b) {
    if (field(a, k) == nullptr) out.push_back({k, "(absent)", v});
  }
  return out;
}

double rounding_limit(const TraceFile& t) {
  const std::string* v = field(t.experiment, kRoundingLimitField);
  double limit = 0;
  if (v == nullptr || std::sscanf(v->c_str(), "%lf", &limit) != 1 || !(limit > 0)) {
    throw InputError(fmt::format(
        "diff: the trace has no valid {} in its experiment; pass traces written by `ddpbench run "
        "--trace`",
        kRoundingLimitField));
  }
  return limit;
}

at::ScalarType run_dtype(const TraceFile& t) {
  const std::string* v = field(t.experiment, "dtype");
  return v != nullptr && *v == "float64" ? at::kDouble : at::kFloat;
}

// The spacing of `dtype`'s values at each element's magnitude (float64 tensors in and out).
at::Tensor ulp_of(const at::Tensor& magnitude, at::ScalarType dtype) {
  return at::exp2(at::floor(at::log2(magnitude.clamp_min(DBL_MIN)))) * compare::epsilon_of(dtype);
}

bool same_bytes(const at::Tensor& a, const at::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  const at::Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()) == 0;
}

// Both sides in one form: a full tensor meets a fingerprint as its fingerprint.
std::pair<at::Tensor, at::Tensor> comparable(const TraceEntry& a, const TraceEntry& b) {
  if (a.fingerprint == b.fingerprint) return {a.value, b.value};
  return {a.fingerprint ? a.value : modes::fingerprint(a.value),
          b.fingerprint ? b.value : modes::fingerprint(b.value)};
}

std::string key_of(const TraceEntry& e) {
  return fmt::format("{}|{}|{}", e.step, modes::trace_phase_name(e.phase), e.tensor);
}

std::string group_of(const TraceEntry& e) {
  return fmt::format("{}|{}", e.step, modes::trace_phase_name(e.phase));
}

std::string phase_what(TracePhase phase) {
  for (const auto& row : modes::kTracePhases) {
    if (row.phase == phase) return row.what;
  }
  return "?";
}

// How two matched tensors differ, measured (Note [Classing a difference]). `allowance` (full
// updates): what each element's difference may be before it counts, the rounding of p + update.
void measure(const TraceEntry& ea, const TraceEntry& eb, double level, double limit,
             at::ScalarType run, const at::Tensor& allowance, TensorDifference& d) {
  const auto [a, b] = comparable(ea, eb);
  d.fingerprint = ea.fingerprint || eb.fingerprint;
  d.dtype = c10::toString(ea.value.scalar_type());
  d.limit = limit;
  if (same_bytes(a, b)) {
    d.cls = DiffClass::kIdentical;
    return;
  }
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) {
    d.cls = DiffClass::kDiverged;
    d.error = INFINITY;
    d.cause = fmt::format("its dtype or shape differs ({} [{}] against {} [{}])",
                          c10::toString(a.scalar_type()), fmt::join(a.sizes(), ", "),
                          c10::toString(b.scalar_type()), fmt::join(b.sizes(), ", "));
    return;
  }
  const at::Tensor da = a.to(at::kDouble), db = b.to(at::kDouble);
  const at::Tensor diff = (da - db).abs();
  const at::Tensor mag = at::maximum(da.abs(), db.abs());
  d.max_abs = diff.max().item<double>();
  const at::Tensor nonzero = mag > 0;
  d.max_rel = nonzero.any().item<bool>()
                  ? (diff.masked_select(nonzero) / mag.masked_select(nonzero)).max().item<double>()
                  : 0.0;
  // An integer buffer (num_batches_tracked) is counted in float32's ulps.
  const at::ScalarType dtype = d.fingerprint                  ? run
                               : ea.value.is_floating_point() ? ea.value.scalar_type()
                                                              : at::kFloat;
  const compare::RoundingLevel floor{level, limit};
  if (d.fingerprint) {
    d.error = std::max(compare::normalized_gradient_error(a, b, true, floor),
                       compare::normalized_gradient_error(b, a, true, floor));
  } else {
    d.ulps = (diff / ulp_of(mag, dtype)).max().item<double>();
    const at::Tensor judged = allowance.defined() ? (diff - allowance).clamp_min(0) : diff;
    d.error = judged.max().item<double>() / std::max(mag.max().item<double>(), floor.scale_floor());
  }
  if (!std::isfinite(d.error)) d.error = INFINITY;
  d.cls = d.error <= limit ? DiffClass::kRounding : DiffClass::kDiverged;
}

// Where a difference appeared first in its mode: the operation whose inputs were identical.
std::string origin_cause(const TraceEntry& e, const std::string& mode, const std::string& world) {
  switch (e.phase) {
    case TracePhase::kStart:
      return "the state training starts from differs: the model's initialisation (its random "
             "draws or init kernels) or the --resume state";
    case TracePhase::kForward:
      return fmt::format(
          "the operation that computes {}: every earlier output of the step and every parameter "
          "were identical, so the kernel itself computes differently (another convolution or "
          "matmul algorithm, another vectorisation or thread split)",
          e.tensor);
    case TracePhase::kLoss:
      return "the loss (or DDP's mean of it over the ranks): every forward output traced was "
             "identical";
    case TracePhase::kLocalGradient:
      return "the backward kernels: the forward and the loss were identical";
    case TracePhase::kReducedGradient:
      if (mode == "single") return "the gradient's accumulation: its backward was identical";
      return fmt::format(
          "the reduction across the {} ranks or replicas (its summation order, algorithm or "
          "precision; the backend, engine or bucket layout), or another rank's local gradient: "
          "this trace holds rank 0's local gradients, which were identical",
          world);
    case TracePhase::kUpdate:
    case TracePhase::kParameter:
    case TracePhase::kOptimizerState:
      return "the optimizer step: the gradients it applied were identical";
    case TracePhase::kBuffer:
      return "the buffer's update (BatchNorm's running statistics in the forward, or DDP's "
             "broadcast of them): the forward outputs were identical";
  }
  return "?";
}

// Note [Parameters judged by what moved them]'s twin for updates: an update is the parameter after
// the step minus before it, so each element carries the rounding of p + update, up to 2 ulps of
// |p| in the parameter's dtype (compare::normalized_update_error allows the same). Only for full
// updates whose parameters both traces hold whole.
at::Tensor update_allowance(const TraceEntry& e,
                            const std::unordered_map<std::string, const TraceEntry*>& in_a,
                            const std::unordered_map<std::string, const TraceEntry*>& in_b) {
  if (e.phase != TracePhase::kUpdate || e.fingerprint || !e.value.is_floating_point()) return {};
  TraceEntry parameter = e;
  parameter.phase = TracePhase::kParameter;
  const std::string key = key_of(parameter);
  const auto pa = in_a.find(key), pb = in_b.find(key);
  if (pa == in_a.end() || pb == in_b.end() || pa->second->fingerprint || pb->second->fingerprint ||
      pa->second->value.sizes() != e.value.sizes() ||
      pb->second->value.sizes() != e.value.sizes()) {
    return {};
  }
  const at::Tensor magnitude =
      at::maximum(pa->second->value.to(at::kDouble).abs(), pb->second->value.to(at::kDouble).abs());
  return 2 * ulp_of(magnitude, e.value.scalar_type());
}

struct ModeDiff {
  reports::DiffRecord& r;
  double limit;
  at::ScalarType run;
  std::string world;

  void note(const TensorDifference& d) {
    if (d.cls == DiffClass::kIdentical) return;
    if (!r.first_difference) r.first_difference = d;
    if (d.cls == DiffClass::kDiverged && !r.first_divergence) r.first_divergence = d;
    if (r.differences.size() < kMaxListed) r.differences.push_back(d);
  }

  void unmatched(const std::string& mode, const TraceEntry& e, const char* side) {
    TensorDifference d = base(mode, e);
    d.cls = DiffClass::kDiverged;
    d.error = INFINITY;
    d.cause = fmt::format(
        "only trace {} holds this tensor (the traces' models or ddpbench "
        "versions record different tensors)",
        side);
    ++r.unmatched;
    ++r.compared;
    ++r.diverged;
    note(d);
  }

  static TensorDifference base(const std::string& mode, const TraceEntry& e) {
    TensorDifference d;
    d.mode = mode;
    d.step = e.step;
    d.phase = modes::trace_phase_name(e.phase);
    d.what = phase_what(e.phase);
    d.tensor = e.tensor;
    return d;
  }

  void count(const TensorDifference& d, reports::StepSpread& s) {
    ++r.compared;
    ++s.compared;
    const std::string where = d.phase + " " + d.tensor;
    switch (d.cls) {
      case DiffClass::kIdentical:
        ++r.identical;
        ++s.identical;
        return;
      case DiffClass::kRounding:
        ++r.rounding;
        ++s.rounding;
        break;
      case DiffClass::kDiverged:
        ++r.diverged;
        ++s.diverged;
        break;
    }
    if (d.error > s.worst_error || s.worst_tensor.empty()) {
      s.worst_error = d.error;
      s.worst_tensor = where;
    }
  }

  void run_mode(const ModeEntries& a, const ModeEntries& b);
};

void ModeDiff::run_mode(const ModeEntries& a, const ModeEntries& b) {
  std::unordered_map<std::string, const TraceEntry*> in_a, in_b;
  for (const TraceEntry& e : a.entries) in_a.emplace(key_of(e), &e);
  for (const TraceEntry& e : b.entries) in_b.emplace(key_of(e), &e);
  // The rounding level of each step's phase: its largest value in either trace.
  std::map<std::string, double> largest;
  for (const auto* side : {&a, &b}) {
    for (const TraceEntry& e : side->entries) {
      double& l = largest[group_of(e)];
      l = std::max(l, compare::gradient_max_abs(e.value, e.fingerprint));
    }
  }
  reports::DiffMap map;
  map.mode = a.mode;
  std::map<std::string, size_t> rows;
  std::map<int64_t, size_t> columns;
  std::map<int64_t, reports::StepSpread> spread;
  std::set<std::string> matched;
  std::optional<TensorDifference> first;
  for (const TraceEntry& e : a.entries) {
    const auto it = in_b.find(key_of(e));
    if (it == in_b.end()) {
      unmatched(a.mode, e, "A");
      continue;
    }
    matched.insert(it->first);
    TensorDifference d = base(a.mode, e);
    const at::ScalarType dtype =
        !e.fingerprint && e.value.is_floating_point() ? e.value.scalar_type() : run;
    const double level = compare::rounding_level(largest[group_of(e)], dtype, limit).level;
    measure(e, *it->second, level, limit, run, update_allowance(e, in_a, in_b), d);
    if (d.cls != DiffClass::kIdentical && d.cause.empty()) {
      d.cause = first
                    ? fmt::format("follows from the earlier difference in the {} of {} at step {}",
                                  first->what, first->tensor, first->step)
                    : origin_cause(e, a.mode, world);
    }
    if (d.cls != DiffClass::kIdentical && !first) first = d;
    reports::StepSpread& s = spread[e.step];
    s.mode = a.mode;
    s.step = e.step;
    count(d, s);
    note(d);
    const std::string row = d.phase + " " + d.tensor;
    if (!rows.count(row)) {
      rows[row] = map.rows.size();
      map.rows.push_back(row);
      map.cells.emplace_back();
      map.classes.emplace_back();
    }
    if (!columns.count(e.step)) {
      columns[e.step] = map.steps.size();
      map.steps.push_back(e.step);
    }
    const size_t ri = rows[row], ci = columns[e.step];
    map.cells[ri].resize(map.steps.size());
    map.classes[ri].resize(map.steps.size());
    if (d.cls != DiffClass::kIdentical) {
      map.cells[ri][ci] = std::isfinite(d.error) ? std::log10(std::max(d.error, 1e-300)) : 300.0;
    }
    map.classes[ri][ci] = d.cls;
  }
  for (const TraceEntry& e : b.entries) {
    if (!matched.count(key_of(e))) unmatched(a.mode, e, "B");
  }
  for (auto& row : map.cells) row.resize(map.steps.size());
  for (auto& row : map.classes) row.resize(map.steps.size());
  for (auto& [step, s] : spread) r.spread.push_back(s);
  r.maps.push_back(std::move(map));
}

}  // namespace

reports::DiffRecord diff_traces(const TraceFile& a, const TraceFile& b,
                                const DiffOptions& options) {
  require_same_experiment(a, b);
  reports::DiffRecord r;
  r.experiment = a.experiment;
  r.environment = side_by_side(a.environment, b.environment);
  r.expect_identical = options.expect_identical;
  const std::string* world = field(a.experiment, "world_size");
  ModeDiff diff{r, rounding_limit(a), run_dtype(a), world ? *world : "?"};
  if (a.values != b.values) {
    r.notes.push_back(fmt::format("A keeps {}; B keeps {}", a.values, b.values));
  }
  for (const ModeEntries& ma : a.modes) {
    const ModeEntries* mb = nullptr;
    for (const ModeEntries& m : b.modes) {
      if (m.mode == ma.mode) mb = &m;
    }
    if (mb == nullptr) {
      r.notes.push_back(fmt::format("mode {} is only in A: not compared", ma.mode));
      continue;
    }
    if (ma.forward != mb->forward) {
      r.notes.push_back(
          fmt::format("mode {}: A's forward is {}; B's is {}", ma.mode, ma.forward, mb->forward));
    }
    diff.run_mode(ma, *mb);
  }
  for (const ModeEntries& mb : b.modes) {
    bool in_a = false;
    for (const ModeEntries& m : a.modes) in_a = in_a || m.mode == mb.mode;
    if (!in_a) r.notes.push_back(fmt::format("mode {} is only in B: not compared", mb.mode));
  }
  if (r.compared == 0) {
    throw InputError(
        "diff: the traces have no mode in common, so nothing can be compared; run both with the "
        "same --modes");
  }
  r.overall = r.diverged > 0   ? DiffClass::kDiverged
              : r.rounding > 0 ? DiffClass::kRounding
                               : DiffClass::kIdentical;
  r.failed = r.overall == DiffClass::kDiverged ||
             (options.expect_identical && r.overall != DiffClass::kIdentical);
  return r;
}

}  // namespace ddpbench::trace
