// trace_diff.cpp — see trace_diff.h.
#include "trace/trace_diff.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>

#include "errors.h"
#include "quoted_input.h"
#include "trace/mode_diff.h"

namespace ddpbench::trace {
namespace {

using reports::DiffClass;

const std::string* field(const Fields& fields, const std::string& name) {
  for (const auto& [k, v] : fields) {
    if (k == name) return &v;
  }
  return nullptr;
}

// A field's value as the refusal shows it: its first differing line, whole up to 100 characters
// (a model's "TorchScript sha256:<64 digits>" shows both hashes), else 60 characters around where
// it first differs, so that A's and B's never read the same.
std::string shown(const std::string& value, const std::string& other) {
  size_t differs = 0;
  while (differs < value.size() && differs < other.size() && value[differs] == other[differs]) {
    ++differs;
  }
  const size_t newline = differs == 0 ? std::string::npos : value.rfind('\n', differs - 1);
  const size_t start = newline == std::string::npos ? 0 : newline + 1;
  std::string line = value.substr(start, value.find('\n', start) - start);
  if (line.size() <= 100) return quoted_input(line);
  const size_t at = differs - start;
  const size_t from = at > 20 ? at - 20 : 0;
  std::string window = line.substr(from, 60);
  if (from > 0) window = "..." + window;
  if (from + 60 < line.size()) window += "...";
  return quoted_input(window);
}

void require_same_experiment(const TraceFile& a, const TraceFile& b) {
  // The fields that restate others last: the dataset's description holds the seed of synthetic
  // data, the scenario's whole file holds everything; a seed, model or batch that differs is
  // named by its own field.
  const std::vector<std::string> derived = {"dataset", "scenario_yaml"};
  const auto is_derived = [&derived](const std::string& k) {
    return std::find(derived.begin(), derived.end(), k) != derived.end();
  };
  std::vector<std::string> names;
  for (const auto& [k, v] : a.experiment) {
    if (!is_derived(k)) names.push_back(k);
  }
  for (const auto& [k, v] : b.experiment) {
    if (field(a.experiment, k) == nullptr && !is_derived(k)) names.push_back(k);
  }
  for (const std::string& k : derived) {
    if (field(a.experiment, k) || field(b.experiment, k)) names.push_back(k);
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

}  // namespace

reports::DiffRecord diff_traces(const TraceFile& a, const TraceFile& b,
                                const DiffOptions& options) {
  require_same_experiment(a, b);
  reports::DiffRecord r;
  r.experiment = a.experiment;
  r.environment = side_by_side(a.environment, b.environment);
  r.expect_identical = options.expect_identical;
  const std::string* world = field(a.experiment, "world_size");
  const DiffContext context{rounding_limit(a), run_dtype(a), world ? *world : "?"};
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
    diff_mode(ma, *mb, context, r);
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
              : r.growth > 0   ? DiffClass::kGrowth
                               : DiffClass::kIdentical;
  r.failed = r.overall == DiffClass::kDiverged ||
             (options.expect_identical && r.overall != DiffClass::kIdentical);
  return r;
}

}  // namespace ddpbench::trace
