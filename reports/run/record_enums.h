// record_enums.h — the closed sets of values a run record holds (a check's status, the mode, what
// a check judges, how a check measures, the run's verdict), each with ONE name table that both the
// writers and the readers of every format use: a value is typed everywhere in the program and a
// string only at a file's edge, so no comparison anywhere can misspell one.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace ddpbench::reports {

// What a check concluded. Only the verdict function (reports/run/verdict.h) decides it.
enum class CheckStatus { kPass, kFail, kExpectedDivergence, kNotComparable, kRounding };

// The execution mode a result belongs to, and the mode a run trains in (modes::ModeKind is this
// type). A value added needs its row in kModeSpecs (the build fails without it).
enum class Mode { kSingle, kDp, kDdp, kZero, kModeCount };

// Note [One row per mode]
// ~~~~~~~~~~~~~~~~~~~~~~~
// Everything the program says of a mode outside the code that runs it: its one name (what
// --modes takes, report.json carries and every format prints), whether it runs one process per
// rank (over a backend and a launch, judged rank by rank) or in the parent, what `run --help`
// says of it, and its colour in report.html. The CLI, resolve, the launch, scale and the report
// formats read these rows; how a per-rank mode runs its phases is its driver
// (training/rank_phases.h).
struct ModeSpec {
  Mode mode;
  std::string_view name;
  bool per_rank;
  std::string_view help;
  std::string_view colour;
};

inline constexpr std::array<ModeSpec, static_cast<size_t>(Mode::kModeCount)> kModeSpecs{{
    {Mode::kSingle, "single", false, "the reference: one device, the whole global batch",
     "#555555"},
    {Mode::kDp, "dp", false, "one process, K replicas, as torch.nn.DataParallel", "#1f77b4"},
    {Mode::kDdp, "ddp", true, "one process per rank, as DistributedDataParallel", "#d62728"},
    {Mode::kZero, "zero", true, "one process per rank, sharded: ZeRO stages 1-3, --zero-stage",
     "#2ca02c"},
}};

constexpr const ModeSpec& mode_spec(Mode mode) { return kModeSpecs[static_cast<size_t>(mode)]; }

namespace detail {
constexpr bool one_row_per_mode() {
  for (size_t i = 0; i < kModeSpecs.size(); ++i) {
    if (kModeSpecs[i].mode != static_cast<Mode>(i) || kModeSpecs[i].name.empty()) return false;
  }
  return true;
}
}  // namespace detail
static_assert(detail::one_row_per_mode(), "every Mode needs its row in kModeSpecs, in order");

// What a check judges, which is also where a failing run first parted from its reference: a
// stage of the step in the order a step computes it (the forward's loss and buffers, backward's
// gradients, the optimizer's updates), the final state (parameters, free-running), the ranks'
// agreement, and the evaluation after training. kNone: no first divergence.
enum class Stage {
  kNone,
  kLoss,
  kBuffers,
  kGradients,
  kUpdates,
  kParameters,
  kRanksBitwiseEqual,
  kRanksBuffersEqual,
  kEvaluation,
  kLossScale,        // --amp fp16: the GradScaler's scale and skipped steps against the reference
  kRanksScaleEqual,  // --amp fp16 under DDP: every rank's scale equals rank 0's
  kInjectedFault,    // an --inject-fault no other check caught (training/fault_detection.h)
  kOptimizerState,   // zero, lockstep: the optimizer's state after each step against the reference
  kMatchesDdp,       // zero: its losses, gradients and final state against ddp's in the same run
  kCollectives,      // zero: every rank's reduction collectives per step against its stage's rule
  kStageCount,       // not a stage: the number of them, so that a value added above needs a row
};
// The last Stage (kStageSpecs has a row for every value up to it, or the build fails).
inline constexpr Stage kLastStage = static_cast<Stage>(static_cast<int>(Stage::kStageCount) - 1);

// How a check's `error` is computed, and so what its `limit` bounds (Note [Recomputable
// verdicts] in verdict.h):
//   kTolerance:  error = max |a - b| / (atol + rtol * |ref|) over every compared element (the
//                assert_close rule as a ratio), limit 1;
//   kNormalized: error = a scale-free error (max |a - b| / max |ref| per tensor), limit = the
//                scenario's gradient tolerance;
//   kExact:      error = 1 when anything differs, 0 otherwise; limit 0.
enum class Measure { kTolerance, kNormalized, kExact };

// A run's verdict: kNotJudged when no check ran (a --perf-only run, a run of `single` alone),
// which is never a pass.
enum class Verdict { kPass, kFail, kNotJudged };

// One name table per enum: {value, name} in declaration order.
template <typename E>
struct EnumNames;

// The part of a step that computes what a check compares, in the order a step computes it: the
// forward's loss and buffers, backward's gradients, the optimizer's updates. A failing run's first
// divergence is its earliest failing item in (step, part, position) order.
enum class StepPart { kLoss = 0, kBuffers = 1, kGradients = 2, kUpdates = 3 };

// How the per-step differences of a tensor family that lockstep records (compare::StateDiff)
// are judged: kLikeState by max |diff| / (atol + rtol * |ref|) and its violations, within the
// state tolerance (kTolerance); kLikeGradient by the normalized error, within the gradient
// tolerance (kNormalized). kNotRecorded: the check is made some other way.
enum class StateJudge { kNotRecorded, kLikeState, kLikeGradient };

// Note [One row per check]: everything the program needs to know of a check (a compared tensor
// family, or an agreement) besides how it is recorded is its row here: the name every format
// writes, which part of a step computed it (the first divergence's text), where its items sort,
// how lockstep's per-step differences of it are judged, and whether a failure has a size. The
// comparison (compare/mode_comparison.cpp), the rank codec (training/outcome_codec.cpp), the
// divergence text and every reader and writer of a report read this table, so a new family is
// this row, its Stage value, the code that records it (training/lockstep.cpp) and its line in
// reports/SCHEMA.md (docs/ARCHITECTURE.md, "Adding things").
// What a check compares a mode with (Note [What a mode was judged against], verdict.h): the
// exact reference (training without data parallelism, with the mode's structure), ddp in the
// same run, the mode's own ranks with each other, a rule (the collectives a reduction must
// issue), the evaluation pass against a single-device evaluation of the same weights, or nothing
// of its own (the guard that fails a fault no other check saw).
enum class Basis { kReference, kDdp, kRanks, kRule, kEvaluation, kGuard };

struct StageSpec {
  Stage stage;
  std::string_view name;
  std::string_view phase;  // which part of the step computed it
  StepPart part;
  StateJudge judge;
  bool sized;  // false: a failure is only what differs (ranks apart, a scale), with no size
  Basis basis;
  // Whether its items are per step (a step's loss, gradients, update), so that the steps it
  // compared something at are the steps it judged; false: the final state, or no step at all.
  bool per_step;
};

inline constexpr std::array<StageSpec, 15> kStageSpecs{{
    {Stage::kNone, "", "final state", StepPart::kLoss, StateJudge::kNotRecorded, true,
     Basis::kGuard, false},
    {Stage::kLoss, "loss", "forward", StepPart::kLoss, StateJudge::kNotRecorded, true,
     Basis::kReference, true},
    {Stage::kBuffers, "buffers", "forward", StepPart::kBuffers, StateJudge::kLikeState, true,
     Basis::kReference, true},
    {Stage::kGradients, "gradients", "backward", StepPart::kGradients, StateJudge::kNotRecorded,
     true, Basis::kReference, true},
    {Stage::kUpdates, "updates", "optimizer step", StepPart::kUpdates, StateJudge::kLikeGradient,
     true, Basis::kReference, true},
    {Stage::kParameters, "parameters", "final state", StepPart::kUpdates, StateJudge::kNotRecorded,
     true, Basis::kReference, false},
    {Stage::kRanksBitwiseEqual, "ranks_bitwise_equal", "ranks apart after the step",
     StepPart::kUpdates, StateJudge::kNotRecorded, false, Basis::kRanks, false},
    {Stage::kRanksBuffersEqual, "ranks_buffers_equal", "buffer broadcast before the forward",
     StepPart::kBuffers, StateJudge::kNotRecorded, false, Basis::kRanks, false},
    {Stage::kEvaluation, "evaluation", "evaluation after training", StepPart::kUpdates,
     StateJudge::kNotRecorded, true, Basis::kEvaluation, false},
    {Stage::kInjectedFault, "injected_fault", "the injected fault", StepPart::kUpdates,
     StateJudge::kNotRecorded, true, Basis::kGuard, false},
    {Stage::kLossScale, "loss_scale", "GradScaler update after the step", StepPart::kUpdates,
     StateJudge::kNotRecorded, false, Basis::kReference, false},
    {Stage::kRanksScaleEqual, "ranks_scale_equal", "GradScaler update after the step",
     StepPart::kUpdates, StateJudge::kNotRecorded, false, Basis::kRanks, false},
    {Stage::kOptimizerState, "optimizer_state", "optimizer step", StepPart::kUpdates,
     StateJudge::kLikeGradient, true, Basis::kReference, true},
    {Stage::kMatchesDdp, "matches_ddp", "against ddp in the same run", StepPart::kLoss,
     StateJudge::kNotRecorded, true, Basis::kDdp, true},
    {Stage::kCollectives, "collectives", "the step's gradient reduction", StepPart::kGradients,
     StateJudge::kNotRecorded, false, Basis::kRule, false},
}};
namespace detail {
// Each of the Stage values 0 .. kLastStage has exactly one row.
constexpr bool one_row_per_stage() {
  for (size_t value = 0; value <= static_cast<size_t>(kLastStage); ++value) {
    int rows = 0;
    for (const StageSpec& s : kStageSpecs) rows += static_cast<size_t>(s.stage) == value ? 1 : 0;
    if (rows != 1) return false;
  }
  return kStageSpecs.size() == static_cast<size_t>(kLastStage) + 1;
}
}  // namespace detail
static_assert(detail::one_row_per_stage(),
              "every Stage up to kLastStage has one row in kStageSpecs");

// The row of `stage`.
constexpr const StageSpec& spec_of(Stage stage) {
  for (const StageSpec& s : kStageSpecs) {
    if (s.stage == stage) return s;
  }
  return kStageSpecs[0];
}

namespace detail {
template <size_t... I>
constexpr std::array<std::pair<Stage, std::string_view>, sizeof...(I)> stage_names(
    std::index_sequence<I...>) {
  return {{{kStageSpecs[I].stage, kStageSpecs[I].name}...}};
}
}  // namespace detail

template <>
struct EnumNames<Stage> {
  static constexpr const char* kWhat = "stage";
  static constexpr auto kTable =
      detail::stage_names(std::make_index_sequence<kStageSpecs.size()>{});
};

template <>
struct EnumNames<CheckStatus> {
  static constexpr const char* kWhat = "check status";
  static constexpr std::array<std::pair<CheckStatus, std::string_view>, 5> kTable{{
      {CheckStatus::kPass, "pass"},
      {CheckStatus::kFail, "fail"},
      {CheckStatus::kExpectedDivergence, "expected_divergence"},
      {CheckStatus::kNotComparable, "not_comparable"},
      {CheckStatus::kRounding, "rounding"},
  }};
};

namespace detail {
template <size_t... I>
constexpr std::array<std::pair<Mode, std::string_view>, sizeof...(I)> mode_names(
    std::index_sequence<I...>) {
  return {{{kModeSpecs[I].mode, kModeSpecs[I].name}...}};
}
}  // namespace detail

template <>
struct EnumNames<Mode> {
  static constexpr const char* kWhat = "mode";
  static constexpr auto kTable = detail::mode_names(std::make_index_sequence<kModeSpecs.size()>{});
};

// Whether a mode's evaluation pass ran (training/evaluation.h): not at all (no check phase), to
// its end, or skipped for the reason the record gives.
enum class EvaluationStatus { kNotRun, kDone, kSkipped };

template <>
struct EnumNames<EvaluationStatus> {
  static constexpr const char* kWhat = "evaluation status";
  static constexpr std::array<std::pair<EvaluationStatus, std::string_view>, 3> kTable{{
      {EvaluationStatus::kNotRun, ""},
      {EvaluationStatus::kDone, "done"},
      {EvaluationStatus::kSkipped, "skipped"},
  }};
};

template <>
struct EnumNames<Measure> {
  static constexpr const char* kWhat = "measure";
  static constexpr std::array<std::pair<Measure, std::string_view>, 3> kTable{{
      {Measure::kTolerance, "tolerance"},
      {Measure::kNormalized, "normalized"},
      {Measure::kExact, "exact"},
  }};
};

template <>
struct EnumNames<Verdict> {
  static constexpr const char* kWhat = "verdict";
  static constexpr std::array<std::pair<Verdict, std::string_view>, 3> kTable{{
      {Verdict::kPass, "pass"},
      {Verdict::kFail, "fail"},
      {Verdict::kNotJudged, "not_judged"},
  }};
};

template <typename E>
constexpr std::string_view name_of(E value) {
  for (const auto& [v, name] : EnumNames<E>::kTable) {
    if (v == value) return name;
  }
  return "?";
}

// The value named `name`, or nullopt.
template <typename E>
std::optional<E> parse_name(std::string_view name) {
  for (const auto& [v, n] : EnumNames<E>::kTable) {
    if (n == name) return v;
  }
  return std::nullopt;
}

// "pass, fail, expected_divergence": for error messages.
template <typename E>
std::string known_names() {
  std::string out;
  for (const auto& [v, n] : EnumNames<E>::kTable) {
    if (n.empty()) continue;
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

// Name tables in a std::string, for fmt and concatenation.
template <typename E>
std::string name_str(E value) {
  return std::string(name_of(value));
}

}  // namespace ddpbench::reports
