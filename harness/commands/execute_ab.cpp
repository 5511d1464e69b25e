// execute_ab.cpp — see execute_ab.h.
#include "commands/execute_ab.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>

#include "commands/ab_rounds.h"
#include "compare/regression_gate.h"
#include "errors.h"
#include "launch/child_process.h"
#include "output/output_dir.h"
#include "quoted_input.h"
#include "reports/gate/gate_table.h"
#include "stats/ab_calibration.h"
#include "stats/load_rule.h"
#include "stats/speed_change.h"

namespace ddpbench::commands {
namespace {

constexpr uint64_t kCalibrationSeed = 20170422;  // the subsets' draws: fixed, so reruns agree

// Note [A slowdown the load explains], applied to the gate's points; returns the comparison for
// ab.json and a note for the table.
stats::LoadComparison apply_load_rule(const AbRounds& a, bool allow_undecided,
                                      compare::GateResult& g) {
  std::vector<double> shares[2];
  for (const auto& pair : a.rounds) {
    for (int side = 0; side < 2; ++side) shares[side].push_back(pair[side].load.others_cpu_share);
  }
  const stats::LoadComparison load = stats::compare_load(shares[0], shares[1]);
  g.notes.push_back(fmt::format(
      "ab: other processes took {:.1f}% of the CPUs while the baseline ran, {:.1f}% while the "
      "current ran (medians over the rounds)",
      100 * load.baseline_median, 100 * load.current_median));
  for (compare::GatePoint& p : g.points) {
    if (p.verdict != "slower" || !stats::load_explains(load, -p.shift_high)) continue;
    p.verdict = "undecided";
    p.detail += fmt::format(
        "; but the current side ran under more load from other processes (+{:.1f}% of the CPUs "
        "in the paired rounds, p = {:.2g}): the load may explain it, not the build (Note [A "
        "slowdown the load explains]); rerun on a quieter runner",
        100 * load.centre, load.p_value);
    if (allow_undecided) p.detail += " (accepted: --allow-undecided)";
  }
  return load;
}

// The checks are deterministic: a round whose verdict differs from round 1's is a flaky check,
// which fails the gate whatever the throughput says.
void require_repeatable_checks(const AbRounds& a, compare::GateResult& g) {
  for (size_t i = 1; i < a.rounds.size(); ++i) {
    for (int side = 0; side < 2; ++side) {
      const reports::Verdict now = a.rounds[i][side].report.verdict;
      const reports::Verdict first = a.rounds.front()[side].report.verdict;
      if (now == first) continue;
      g.passed = false;
      g.notes.push_back(fmt::format(
          "ab: round {}'s {} run says {} where round 1's said {}: the checks are not repeatable",
          i + 1, kAbSides[side], reports::name_of(now), reports::name_of(first)));
    }
  }
}

// A kept calibration.json's lines for the points it measured.
std::vector<std::string> calibration_notes(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json doc;
  try {
    if (!in) throw std::runtime_error("cannot be read");
    doc = nlohmann::json::parse(in);
    std::vector<std::string> notes;
    for (const auto& p : doc.at("points")) {
      notes.push_back(fmt::format(
          "ab: this runner's calibration ({}, {} A/A rounds, {}): at {} rounds, A/A was slower "
          "in {:.1f}% and undecided in {:.1f}% of subsets; a slowdown beyond {:.1f}% is found "
          "with 95% power; {:.1f}% needs about {} rounds",
          quoted_input(path), p.at("rounds").get<int64_t>(), p.at("point").get<std::string>(),
          p.at("gate_rounds").get<int64_t>(), 100 * p.at("false_alarm_rate").get<double>(),
          100 * p.at("undecided_rate").get<double>(),
          100 * p.at("detectable_slowdown").get<double>(), 100 * p.at("allowed").get<double>(),
          p.at("rounds_for_allowed").get<int64_t>()));
    }
    return notes;
  } catch (const std::exception& e) {
    throw InputError(fmt::format(
        "ab: --calibration {} is not a calibration.json of `ab --calibrate` ({}); pass the one "
        "that command wrote",
        quoted_input(path), e.what()));
  }
}

int calibrate(const requests::AbRequest& request, const std::string& binary,
              const std::vector<std::string>& run_args, output::OutputDir& out) {
  const AbRounds a =
      run_ab_rounds({binary, binary}, run_args, request.rounds, request.seed, request.duet, out);
  nlohmann::json points = nlohmann::json::array();
  std::string table;
  for (const auto& [key, sides] : a.paired) {
    std::vector<double> log_ratios;
    for (size_t i = 0; i < sides[0].size(); ++i) {
      log_ratios.push_back(std::log(sides[1][i]) - std::log(sides[0][i]));
    }
    const stats::AbCalibration c = stats::calibrate_ab(log_ratios, request.gate_rounds,
                                                       request.max_slowdown, kCalibrationSeed);
    points.push_back({{"point", key},
                      {"rounds", c.rounds},
                      {"log_ratio_sd", c.log_ratio_sd},
                      {"gate_rounds", c.gate_rounds},
                      {"false_alarm_rate", c.false_alarm_rate},
                      {"undecided_rate", c.undecided_rate},
                      {"detectable_slowdown", c.detectable_slowdown},
                      {"allowed", c.allowed},
                      {"rounds_for_allowed", c.rounds_for_allowed}});
    table += fmt::format(
        "{}: {} A/A rounds, paired spread {:.1f}% (sd of the log ratios); a gate of {} rounds "
        "called A/A slower in {:.1f}% and undecided in {:.1f}% of {} subsets; it finds a "
        "slowdown beyond {:.1f}% with 95% power; {:.1f}% allowed needs about {} rounds\n",
        key, c.rounds, 100 * c.log_ratio_sd, c.gate_rounds, 100 * c.false_alarm_rate,
        100 * c.undecided_rate, stats::kCalibrationDraws, 100 * c.detectable_slowdown,
        100 * c.allowed, c.rounds_for_allowed);
  }
  const nlohmann::json doc = {
      {"schema_version", 1},  {"kind", "ab_calibration"},
      {"binary", binary},     {"duet", request.duet},
      {"run_args", run_args}, {"measured_at_unix_s", static_cast<int64_t>(std::time(nullptr))},
      {"rounds", a.json},     {"points", points}};
  out.stage("calibration.json", doc.dump(2) + "\n");
  out.commit();
  fmt::print("{}", table);
  return kExitOk;
}

// The gate over the rounds' pairs: the first round's reports carry the configuration and the
// checks (run_gate refuses reports that differ in what they compute), the paired rounds the
// throughput.
compare::GateResult gate_ab_rounds(const requests::AbRequest& request, const AbRounds& a) {
  compare::GateThresholds thresholds;
  thresholds.max_slowdown = request.max_slowdown;
  thresholds.allow_undecided = request.allow_undecided;
  for (const auto& [key, sides] : a.paired) thresholds.paired_rounds[key] = {sides[0], sides[1]};
  return compare::run_gate(a.rounds.front()[0].report, a.rounds.front()[1].report, thresholds);
}

// The table's note on how the rounds ran.
std::string ab_rounds_note(const requests::AbRequest& request) {
  return request.duet
             ? fmt::format(
                   "ab: {} duet rounds in this job, each the baseline and the current build "
                   "at the same time, sharing the machine (Note [Duet rounds]: extra work "
                   "shows, extra waiting may not); throughput on the paired rounds, checks "
                   "on round 1",
                   request.rounds)
             : fmt::format(
                   "ab: {} rounds in this job, each the baseline and the current build "
                   "once, back to back, in a drawn, balanced order (seed {}); throughput on "
                   "the paired rounds, checks on round 1",
                   request.rounds, request.seed);
}

// ab.json's points: each point's verdict and figures, with the paired statistics where the
// paired rounds decided it.
nlohmann::json ab_points_json(const compare::GateResult& g) {
  nlohmann::json points = nlohmann::json::array();
  for (const compare::GatePoint& p : g.points) {
    nlohmann::json j = {{"point", p.key},
                        {"verdict", p.verdict},
                        {"detail", p.detail},
                        {"timing_rule", p.timing_rule},
                        {"baseline_samples_per_s", p.baseline_samples_per_s},
                        {"current_samples_per_s", p.current_samples_per_s},
                        {"delta", p.delta}};
    if (p.timing_rule == "paired rounds") {
      j["shift"] = p.shift;
      j["shift_interval"] = {p.shift_low, p.shift_high};
      j["p_value"] = p.p_value;
      if (p.verdict == "undecided") j["rounds_needed"] = p.repeats_needed;
    }
    points.push_back(j);
  }
  return points;
}

}  // namespace

int execute_ab(const requests::AbRequest& request) {
  const std::string current = request.current_binary.empty()
                                  ? launch::self_executable()
                                  : resolve_ab_binary(request.current_binary, "--current-bin");
  if (!request.calibrate && request.baseline_binary.empty()) {
    throw InputError(
        "ab: no --baseline-bin: give the baseline's build, or --calibrate to measure this runner "
        "with A/A rounds of one build");
  }
  const std::vector<std::string> run_args = ab_run_args(request.run_args);
  const std::vector<std::string> calibration = request.calibration.empty()
                                                   ? std::vector<std::string>{}
                                                   : calibration_notes(request.calibration);
  const std::array<std::string, 2> binaries = {
      request.calibrate ? current : resolve_ab_binary(request.baseline_binary, "--baseline-bin"),
      current};
  output::OutputDir out(request.out, output::OutputPolicy::kOwnFolder, "ab");
  if (request.calibrate) return calibrate(request, current, run_args, out);

  const AbRounds a =
      run_ab_rounds(binaries, run_args, request.rounds, request.seed, request.duet, out);
  compare::GateResult g = gate_ab_rounds(request, a);
  g.notes.push_back(ab_rounds_note(request));
  g.notes.push_back(fmt::format("ab: baseline {}; current {}", binaries[0], binaries[1]));
  g.notes.insert(g.notes.end(), calibration.begin(), calibration.end());
  const stats::LoadComparison load = apply_load_rule(a, request.allow_undecided, g);
  g.passed = true;
  for (const compare::GatePoint& p : g.points) {
    g.passed =
        g.passed && (p.verdict == "ok" || (p.verdict == "undecided" && request.allow_undecided));
  }
  require_repeatable_checks(a, g);

  const nlohmann::json points = ab_points_json(g);
  const nlohmann::json doc = {{"schema_version", 1},
                              {"baseline_binary", binaries[0]},
                              {"current_binary", binaries[1]},
                              {"run_args", run_args},
                              {"seed", request.seed},
                              {"duet", request.duet},
                              {"max_slowdown", request.max_slowdown},
                              {"rounds", a.json},
                              {"points", points},
                              {"notes", g.notes},
                              {"load",
                               {{"baseline_median_others_cpu_share", load.baseline_median},
                                {"current_median_others_cpu_share", load.current_median},
                                {"paired_centre", load.centre},
                                {"p_value", load.p_value},
                                {"current_busier", load.current_busier}}},
                              {"passed", g.passed}};
  out.stage("ab.json", doc.dump(2) + "\n");
  out.commit();
  fmt::print("{}", reports::render_gate_table(g, request.format == "md"));
  return g.passed ? kExitOk : kExitCheckFailed;
}

}  // namespace ddpbench::commands
