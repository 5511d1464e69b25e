// execute_ab.cpp — see execute_ab.h.
#include "commands/execute_ab.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "compare/regression_gate.h"
#include "errors.h"
#include "launch/child_process.h"
#include "launch/runner_load.h"
#include "output/output_dir.h"
#include "output/report_file.h"
#include "output/scratch_dir.h"
#include "quoted_input.h"
#include "reports/gate_table.h"
#include "reports/record_enums.h"
#include "stats/load_rule.h"
#include "stats/rank_statistics.h"
#include "stats/speed_change.h"

namespace ddpbench::run {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSides[] = {"baseline", "current"};

// A ddpbench binary, or a build folder holding one (harness/ddpbench, as ci/build.sh lays it
// out, or ddpbench at its top).
std::string resolve_binary(const std::string& given, const std::string& flag) {
  std::error_code ec;
  fs::path p = given;
  if (fs::is_directory(p, ec)) {
    for (const char* inside : {"harness/ddpbench", "ddpbench"}) {
      if (fs::is_regular_file(p / inside, ec)) {
        p /= inside;
        break;
      }
    }
  }
  if (!fs::is_regular_file(p, ec) || ::access(p.c_str(), X_OK) != 0) {
    throw InputError(fmt::format(
        "ab: {} {} is not an executable ddpbench (nor a build folder holding harness/ddpbench); "
        "build that commit first (ci/build.sh) and pass its binary",
        flag, quoted_input(given)));
  }
  return fs::absolute(p).lexically_normal().string();
}

// What `run` may not be given here: the folder is each round's, the rounds are the repeats, and
// a run that times nothing has nothing to pair.
void require_usable_run_args(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    const std::string flag = a.substr(0, a.find('='));
    if (flag == "--out" || flag == "--repeats" || flag == "--check-only") {
      throw InputError(fmt::format(
          "ab: {} in the run arguments: {}", flag,
          flag == "--out"       ? "ab writes each round's report itself; give ab --out instead"
          : flag == "--repeats" ? "the rounds are the repeats here; give ab --rounds instead"
                                : "a run that times nothing has nothing to pair; drop it (use "
                                  "--perf-only to skip the checks)"));
    }
  }
}

// The last non-empty line of a child's log: what it said when it stopped.
std::string last_line(const std::string& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last.empty() ? "(it printed nothing)" : last;
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct SideRun {
  int exit_code = 0;
  reports::RunReport report;
  std::string report_bytes;
  std::map<std::string, double> seconds_per_step;  // per timed point: its repeat's median
  launch::RunnerLoad load;                         // what else the machine did meanwhile
};

nlohmann::json load_json(const launch::RunnerLoad& l) {
  return {{"wall_s", l.wall_s},
          {"others_cpu_share", l.others_cpu_share},
          {"steal_share", l.steal_share},
          {"iowait_share", l.iowait_share},
          {"load_average_1m", l.load_average_1m},
          {"cpu_mhz", l.cpu_mhz}};
}

SideRun run_side(const std::string& binary, const std::vector<std::string>& run_args,
                 const std::string& tmp, int64_t round, const char* side) {
  const std::string tag = fmt::format("round{:02}_{}", round, side);
  const std::string folder = tmp + "/" + tag;
  std::vector<std::string> argv = {fmt::format("ddpbench-ab-{}", side), "run"};
  argv.insert(argv.end(), run_args.begin(), run_args.end());
  argv.insert(argv.end(), {"--out", folder});
  const std::string log = tmp + "/" + tag + ".log";
  SideRun s;
  const launch::LoadMeter meter;
  s.exit_code = launch::run_program(binary, argv, tmp, log);
  s.load = meter.finish();
  if (s.exit_code == kExitBadInput) {
    throw InputError(
        fmt::format("ab: the {} build refused the run arguments: {}", side, last_line(log)));
  }
  if (s.exit_code != kExitOk && s.exit_code != kExitCheckFailed) {
    throw WorkerFailure(fmt::format("ab: round {}, the {} run failed with exit code {}: {}", round,
                                    side, s.exit_code, last_line(log)));
  }
  s.report_bytes = read_bytes(folder + "/report.json");
  s.report = output::read_report_file(folder + "/report.json");
  for (const reports::ModeResult& r : s.report.results) {
    if (r.throughput.spread.repeat_medians_s.empty()) continue;
    s.seconds_per_step[compare::point_key(s.report.config, r)] =
        stats::median(r.throughput.spread.repeat_medians_s);
  }
  return s;
}

}  // namespace

int execute_ab(const AbRequest& request) {
  const std::string binaries[2] = {resolve_binary(request.baseline_binary, "--baseline-bin"),
                                   request.current_binary.empty()
                                       ? launch::self_executable()
                                       : resolve_binary(request.current_binary, "--current-bin")};
  std::vector<std::string> run_args = request.run_args;
  if (!run_args.empty() && run_args.front() == "run") run_args.erase(run_args.begin());
  require_usable_run_args(run_args);
  output::OutputDir out(request.out, output::OutputPolicy::kOwnFolder, "ab");
  const output::ScratchDir scratch("ab");

  std::mt19937_64 order_rng(request.seed);
  compare::GateThresholds thresholds;
  thresholds.max_slowdown = request.max_slowdown;
  thresholds.allow_undecided = request.allow_undecided;
  std::vector<std::array<SideRun, 2>> rounds;
  nlohmann::json rounds_json = nlohmann::json::array();
  // The order of each round is drawn, so that a load rising or falling within rounds favours
  // neither side; and balanced (each side first in half the rounds, R odd: one more), so that
  // what the second run of a pair inherits from the first (a warm page cache, a CPU clock
  // already raised) is spread evenly over both sides rather than left to chance.
  std::vector<bool> current_first_in(static_cast<size_t>(request.rounds), false);
  for (size_t i = 0; i < current_first_in.size() / 2; ++i) current_first_in[i] = true;
  std::shuffle(current_first_in.begin(), current_first_in.end(), order_rng);
  for (int64_t round = 1; round <= request.rounds; ++round) {
    const bool current_first = current_first_in[static_cast<size_t>(round - 1)];
    const int order[2] = {current_first ? 1 : 0, current_first ? 0 : 1};
    std::array<SideRun, 2> pair;
    for (int side : order) {
      fmt::print("ab: round {}/{}, {} ...\n", round, request.rounds, kSides[side]);
      std::fflush(stdout);
      pair[side] = run_side(binaries[side], run_args, scratch.path(), round, kSides[side]);
    }
    nlohmann::json r = {{"round", round}, {"order", {kSides[order[0]], kSides[order[1]]}}};
    for (int side = 0; side < 2; ++side) {
      const std::string name = fmt::format("round{:02}_{}.json", round, kSides[side]);
      out.stage(name, pair[side].report_bytes);
      r[kSides[side]] = {{"report", name},
                         {"exit_code", pair[side].exit_code},
                         {"verdict", reports::name_of(pair[side].report.verdict)},
                         {"seconds_per_step", pair[side].seconds_per_step},
                         {"runner", load_json(pair[side].load)}};
    }
    rounds_json.push_back(r);
    rounds.push_back(std::move(pair));
  }

  // Every point both sides timed in every round is paired; the first round's reports carry the
  // configuration and the checks (run_gate refuses reports that differ in what they compute).
  for (const auto& [key, first] : rounds.front()[0].seconds_per_step) {
    compare::GateThresholds::PairedRounds paired;
    for (const auto& pair : rounds) {
      const auto b = pair[0].seconds_per_step.find(key);
      const auto c = pair[1].seconds_per_step.find(key);
      if (b == pair[0].seconds_per_step.end() || c == pair[1].seconds_per_step.end()) continue;
      paired.baseline_s.push_back(b->second);
      paired.current_s.push_back(c->second);
    }
    if (paired.baseline_s.size() == rounds.size()) thresholds.paired_rounds[key] = paired;
  }
  if (thresholds.paired_rounds.empty()) {
    throw InputError(
        "ab: the runs timed no point in every round: nothing to pair (give run arguments with a "
        "timed phase, e.g. --perf-only --steps 100)");
  }
  compare::GateResult g =
      compare::run_gate(rounds.front()[0].report, rounds.front()[1].report, thresholds);
  g.notes.push_back(fmt::format(
      "ab: {} rounds in this job, each the baseline and the current build once, back to back, in "
      "a drawn, balanced order (seed {}); throughput on the paired rounds, checks on round 1",
      request.rounds, request.seed));
  g.notes.push_back(fmt::format("ab: baseline {}; current {}", binaries[0], binaries[1]));
  std::vector<double> shares[2];
  for (const auto& pair : rounds) {
    for (int side = 0; side < 2; ++side) shares[side].push_back(pair[side].load.others_cpu_share);
  }
  const stats::LoadComparison load = stats::compare_load(shares[0], shares[1]);
  g.notes.push_back(fmt::format(
      "ab: other processes took {:.1f}% of the CPUs while the baseline ran, {:.1f}% while the "
      "current ran (medians over the rounds)",
      100 * load.baseline_median, 100 * load.current_median));
  for (compare::GatePoint& p : g.points) {
    if (p.verdict != "slower" || !load.current_busier) continue;
    p.verdict = "undecided";
    p.detail += fmt::format(
        "; but the current side ran under more load from other processes (+{:.1f}% of the CPUs "
        "in the paired rounds, p = {:.2g}): the load may explain it, not the build (Note [A "
        "slowdown the load explains]); rerun on a quieter runner",
        100 * load.centre, load.p_value);
    if (request.allow_undecided) p.detail += " (accepted: --allow-undecided)";
  }
  g.passed = true;
  for (const compare::GatePoint& p : g.points) {
    g.passed =
        g.passed && (p.verdict == "ok" || (p.verdict == "undecided" && request.allow_undecided));
  }
  // The checks are deterministic: a round whose verdict differs from round 1's is a flaky check,
  // which fails the gate whatever the throughput says.
  for (size_t i = 1; i < rounds.size(); ++i) {
    for (int side = 0; side < 2; ++side) {
      if (rounds[i][side].report.verdict == rounds.front()[side].report.verdict) continue;
      g.passed = false;
      g.notes.push_back(fmt::format(
          "ab: round {}'s {} run says {} where round 1's said {}: the checks are not repeatable",
          i + 1, kSides[side], reports::name_of(rounds[i][side].report.verdict),
          reports::name_of(rounds.front()[side].report.verdict)));
    }
  }

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
  const nlohmann::json doc = {{"schema_version", 1},
                              {"baseline_binary", binaries[0]},
                              {"current_binary", binaries[1]},
                              {"run_args", run_args},
                              {"seed", request.seed},
                              {"max_slowdown", request.max_slowdown},
                              {"rounds", rounds_json},
                              {"points", points},
                              {"notes", g.notes},
                              {"load",
                               {{"baseline_median_others_cpu_share", load.baseline_median},
                                {"current_median_others_cpu_share", load.current_median},
                                {"paired_centre", load.centre},
                                {"p_value", load.p_value},
                                {"explains_a_slowdown", load.current_busier}}},
                              {"passed", g.passed}};
  out.stage("ab.json", doc.dump(2) + "\n");
  out.commit();
  fmt::print("{}", reports::render_gate_table(g, request.format == "md"));
  return g.passed ? kExitOk : kExitCheckFailed;
}

}  // namespace ddpbench::run
