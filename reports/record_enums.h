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

// What a check concluded. Only the verdict function (reports/verdict.h) decides it.
enum class CheckStatus { kPass, kFail, kExpectedDivergence };

// The execution mode a result belongs to (modes::ModeKind is the same set, for running).
enum class Mode { kSingle, kDp, kDdp, kZero };

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
};

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

template <>
struct EnumNames<CheckStatus> {
  static constexpr const char* kWhat = "check status";
  static constexpr std::array<std::pair<CheckStatus, std::string_view>, 3> kTable{{
      {CheckStatus::kPass, "pass"},
      {CheckStatus::kFail, "fail"},
      {CheckStatus::kExpectedDivergence, "expected_divergence"},
  }};
};

template <>
struct EnumNames<Mode> {
  static constexpr const char* kWhat = "mode";
  static constexpr std::array<std::pair<Mode, std::string_view>, 4> kTable{{
      {Mode::kSingle, "single"},
      {Mode::kDp, "dp"},
      {Mode::kDdp, "ddp"},
      {Mode::kZero, "zero"},
  }};
};

template <>
struct EnumNames<Stage> {
  static constexpr const char* kWhat = "stage";
  static constexpr std::array<std::pair<Stage, std::string_view>, 14> kTable{{
      {Stage::kNone, ""},
      {Stage::kLoss, "loss"},
      {Stage::kBuffers, "buffers"},
      {Stage::kGradients, "gradients"},
      {Stage::kUpdates, "updates"},
      {Stage::kParameters, "parameters"},
      {Stage::kRanksBitwiseEqual, "ranks_bitwise_equal"},
      {Stage::kRanksBuffersEqual, "ranks_buffers_equal"},
      {Stage::kEvaluation, "evaluation"},
      {Stage::kInjectedFault, "injected_fault"},
      {Stage::kLossScale, "loss_scale"},
      {Stage::kRanksScaleEqual, "ranks_scale_equal"},
      {Stage::kOptimizerState, "optimizer_state"},
      {Stage::kMatchesDdp, "matches_ddp"},
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
