// ab_rounds.cpp — see ab_rounds.h.
#include "commands/ab_rounds.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "compare/regression_gate.h"
#include "errors.h"
#include "launch/child_process.h"
#include "output/report_file.h"
#include "output/scratch_dir.h"
#include "quoted_input.h"
#include "reports/run/record_enums.h"
#include "stats/rank_statistics.h"

namespace ddpbench::commands {
namespace {

namespace fs = std::filesystem;

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

nlohmann::json load_json(const launch::RunnerLoad& l) {
  return {{"wall_s", l.wall_s},
          {"others_cpu_share", l.others_cpu_share},
          {"steal_share", l.steal_share},
          {"iowait_share", l.iowait_share},
          {"load_average_1m", l.load_average_1m},
          {"cpu_mhz", l.cpu_mhz}};
}

// One side's run of one round, its report read back into `bytes` too (staged as it was).
AbSideRun run_side(const std::string& binary, const std::vector<std::string>& run_args,
                   const std::string& tmp, int64_t round, const char* side, std::string& bytes) {
  const std::string tag = fmt::format("round{:02}_{}", round, side);
  const std::string folder = tmp + "/" + tag;
  std::vector<std::string> argv = {fmt::format("ddpbench-ab-{}", side), "run"};
  argv.insert(argv.end(), run_args.begin(), run_args.end());
  argv.insert(argv.end(), {"--out", folder});
  const std::string log = tmp + "/" + tag + ".log";
  AbSideRun s;
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
  bytes = read_bytes(folder + "/report.json");
  s.report = output::read_report_file(folder + "/report.json");
  for (const reports::ModeResult& r : s.report.results) {
    if (r.throughput.spread.repeat_medians_s.empty()) continue;
    s.seconds_per_step[compare::point_key(s.report.config, r)] =
        stats::median(r.throughput.spread.repeat_medians_s);
  }
  return s;
}

}  // namespace

std::string resolve_ab_binary(const std::string& given, const std::string& flag) {
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

std::vector<std::string> ab_run_args(std::vector<std::string> args) {
  if (!args.empty() && args.front() == "run") args.erase(args.begin());
  // The folder is each round's, the rounds are the repeats, and a run that times nothing has
  // nothing to pair.
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
  return args;
}

namespace {

// Both sides of a round at once (Note [Duet rounds]), each waited for by its own thread; the
// first failure, the baseline's if both failed, is thrown once both have ended.
std::array<AbSideRun, 2> run_duet(const std::array<std::string, 2>& binaries,
                                  const std::vector<std::string>& run_args, const std::string& tmp,
                                  int64_t round, std::array<std::string, 2>& bytes) {
  std::array<AbSideRun, 2> pair;
  std::array<std::exception_ptr, 2> failed;
  const auto side_run = [&](int side) {
    try {
      pair[side] = run_side(binaries[side], run_args, tmp, round, kAbSides[side], bytes[side]);
    } catch (...) {
      failed[side] = std::current_exception();
    }
  };
  // One meter over the round: each side's own meter would count the other side as a neighbour
  // until it is reaped (measured: 44% "others" on the side reaped first, 0% on the other), and
  // both met the same machine, which is the point.
  const launch::LoadMeter meter;
  std::thread current(side_run, 1);
  side_run(0);
  current.join();
  for (const std::exception_ptr& e : failed) {
    if (e) std::rethrow_exception(e);
  }
  pair[0].load = pair[1].load = meter.finish();
  return pair;
}

}  // namespace

AbRounds run_ab_rounds(const std::array<std::string, 2>& binaries,
                       const std::vector<std::string>& run_args, int64_t rounds, uint64_t seed,
                       bool duet, output::OutputDir& out) {
  const output::ScratchDir scratch("ab");
  // The order of each round is drawn, so that a load rising or falling within rounds favours
  // neither side; and balanced (each side first in half the rounds, R odd: one more), so that
  // what the second run of a pair inherits from the first (a warm page cache, a CPU clock
  // already raised) is spread evenly over both sides rather than left to chance.
  std::mt19937_64 order_rng(seed);
  std::vector<bool> current_first_in(static_cast<size_t>(rounds), false);
  for (size_t i = 0; i < current_first_in.size() / 2; ++i) current_first_in[i] = true;
  std::shuffle(current_first_in.begin(), current_first_in.end(), order_rng);
  AbRounds a;
  a.json = nlohmann::json::array();
  for (int64_t round = 1; round <= rounds; ++round) {
    const bool current_first = current_first_in[static_cast<size_t>(round - 1)];
    const int order[2] = {current_first ? 1 : 0, current_first ? 0 : 1};
    std::array<AbSideRun, 2> pair;
    std::array<std::string, 2> bytes;
    if (duet) {
      fmt::print("ab: round {}/{}, both at once ...\n", round, rounds);
      std::fflush(stdout);
      pair = run_duet(binaries, run_args, scratch.path(), round, bytes);
    } else {
      for (int side : order) {
        fmt::print("ab: round {}/{}, {} ...\n", round, rounds, kAbSides[side]);
        std::fflush(stdout);
        pair[side] =
            run_side(binaries[side], run_args, scratch.path(), round, kAbSides[side], bytes[side]);
      }
    }
    for (int side = 0; side < 2; ++side) {
      out.stage(fmt::format("round{:02}_{}.json", round, kAbSides[side]), bytes[side]);
    }
    nlohmann::json r = {{"round", round}};
    r["order"] = duet ? nlohmann::json("together")
                      : nlohmann::json({kAbSides[order[0]], kAbSides[order[1]]});
    for (int side = 0; side < 2; ++side) {
      r[kAbSides[side]] = {{"report", fmt::format("round{:02}_{}.json", round, kAbSides[side])},
                           {"exit_code", pair[side].exit_code},
                           {"verdict", reports::name_of(pair[side].report.verdict)},
                           {"seconds_per_step", pair[side].seconds_per_step},
                           {"runner", load_json(pair[side].load)}};
    }
    a.json.push_back(r);
    a.rounds.push_back(std::move(pair));
  }
  // Every point both sides timed in every round is paired.
  for (const auto& [key, first] : a.rounds.front()[0].seconds_per_step) {
    std::array<std::vector<double>, 2> paired;
    for (const auto& pair : a.rounds) {
      for (int side = 0; side < 2; ++side) {
        const auto it = pair[side].seconds_per_step.find(key);
        if (it != pair[side].seconds_per_step.end()) paired[side].push_back(it->second);
      }
    }
    if (paired[0].size() == a.rounds.size() && paired[1].size() == a.rounds.size()) {
      a.paired[key] = paired;
    }
  }
  if (a.paired.empty()) {
    throw InputError(
        "ab: the runs timed no point in every round: nothing to pair (give run arguments with a "
        "timed phase, e.g. --perf-only --steps 100)");
  }
  return a;
}

}  // namespace ddpbench::commands
