// diff_record.h — what `ddpbench diff A B` found (trace/trace_diff.h computes it; diff_json,
// diff_text and diff_html render it): the experiment both traces ran, the environment fields that
// differ, every tensor's difference classed, the first difference and the first divergence, and
// how the differences spread over the steps.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ddpbench::reports {

// identical: bit for bit. rounding: a difference that appears at an operation whose inputs were
// identical in both traces, within the rounding measured for it (a reduction: the range every
// summation order of the same contributions spans, Note [A reduction judged by its own
// contributions]) or, for a kernel or the optimizer, within the scenario's gradient tolerance.
// growth: a difference that follows from earlier rounding differences only (free-running
// trajectories part as the model amplifies them), where the operation itself did nothing
// wrong. diverged: beyond its rounding, or following from a divergence.
enum class DiffClass { kIdentical, kRounding, kGrowth, kDiverged };
const char* diff_class_name(DiffClass c);

struct DiffSide {
  std::string path;    // as given: a run folder or a trace file
  std::string trace;   // the trace file read
  std::string sha256;  // its hash (report.json names it)
};

struct EnvironmentField {
  std::string field;
  std::string a;
  std::string b;
  bool differs() const { return a != b; }
};

// One tensor of both traces, compared.
struct TensorDifference {
  std::string mode;
  int64_t step = 0;
  std::string phase;         // modes::kTracePhases' name
  std::string what;          // the phase in words ("gradient after the reduction")
  std::string tensor;        // "layer1.0.conv2", "fc.weight", "fc.weight[momentum_buffer]", "loss"
  bool fingerprint = false;  // compared as [4] fingerprints (either side kept only those)
  DiffClass cls = DiffClass::kIdentical;
  double max_abs = 0.0;
  double max_rel = 0.0;  // max |a - b| / max(|a|, |b|) over elements not both 0
  double ulps = -1.0;    // max |a - b| in units in the last place of the dtype; -1 for fingerprints
  double error = 0.0;    // the normalized error the class is decided on
  double limit = 0.0;    // the rounding limit it was held to
  std::string dtype;
  // Why it differs, as far as the trace can tell: the operation whose inputs were identical, or
  // the earlier difference it follows from.
  std::string cause;
  // What it was held to: "reduction" (measured on the tensor and step: each trace's reduced
  // gradient within the range every summation order of its own ranks' gradients spans),
  // "tolerance" (the scenario's gradient tolerance: a kernel or the optimizer), "follows" (not
  // judged on its own: growth from an earlier difference), "" (identical, or unmatched).
  std::string held_to;
  // reduction: the measured range's largest width, and how far the reduced gradient of A and of
  // B lies outside its range (0: a valid reduction), per element in ulps of the dtype and
  // normalized by the tensor's largest value; -1 where not measured.
  double range_ulps = -1;
  double range = -1;
  double a_outside_ulps = -1;
  double b_outside_ulps = -1;
  std::string measured_how;  // the orders computed
};

// Per mode and step: how many tensors differ and the worst.
struct StepSpread {
  std::string mode;
  int64_t step = 0;
  int64_t compared = 0;
  int64_t identical = 0;
  int64_t rounding = 0;
  int64_t growth = 0;
  int64_t diverged = 0;
  double worst_error = 0.0;
  std::string worst_tensor;  // "<phase> <tensor>"
};

// The step x tensor map of one mode: log10 of each tensor's normalized error (a row per tensor in
// computation order, a column per step); identical cells hold no value, and a step that does not
// compute the tensor (the start state after the first) holds no class.
struct DiffMap {
  std::string mode;
  std::vector<int64_t> steps;
  std::vector<std::string> rows;                               // "<phase> <tensor>"
  std::vector<std::vector<std::optional<double>>> cells;       // [row][column]
  std::vector<std::vector<std::optional<DiffClass>>> classes;  // [row][column]
};

struct DiffRecord {
  DiffSide a;
  DiffSide b;
  std::vector<std::pair<std::string, std::string>> experiment;  // what both ran
  std::vector<EnvironmentField> environment;                    // side by side, every field
  std::vector<std::string> notes;  // modes or tensors only one trace has, the value forms
  bool expect_identical = false;   // --expect identical
  int64_t compared = 0;
  int64_t identical = 0;
  int64_t rounding = 0;
  int64_t growth = 0;
  int64_t diverged = 0;
  int64_t unmatched = 0;  // tensors only one trace holds (counted as diverged)
  std::optional<TensorDifference> first_difference;  // the first tensor not identical
  std::optional<TensorDifference> first_divergence;  // the first tensor classed diverged
  std::vector<TensorDifference> differences;         // every tensor not identical, in order
  std::vector<StepSpread> spread;
  std::vector<DiffMap> maps;
  DiffClass overall = DiffClass::kIdentical;  // the worst class
  bool failed = false;                        // exit 1
};

}  // namespace ddpbench::reports
