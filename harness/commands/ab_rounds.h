// ab_rounds.h — the measuring half of `ddpbench ab`: the baseline and the current build run the
// same `run` arguments in R rounds, each round both once, back to back, each run a fresh process
// whose machine load is measured beside it (launch/runner_load.h), in an order drawn per round and
// balanced over the rounds. What `ab` then decides from them: commands/execute_ab.h.
#pragma once

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "launch/runner_load.h"
#include "output/output_dir.h"
#include "reports/run_record.h"

namespace ddpbench::run {

inline constexpr const char* kAbSides[] = {"baseline", "current"};

struct AbSideRun {
  int exit_code = 0;
  reports::RunReport report;
  std::map<std::string, double> seconds_per_step;  // per timed point: its repeat's median
  launch::RunnerLoad load;                         // what else the machine did meanwhile
};

struct AbRounds {
  std::vector<std::array<AbSideRun, 2>> rounds;  // [round][0 baseline, 1 current]
  nlohmann::json json;                           // ab.json's "rounds"
  // Per point timed by both sides in every round: the rounds' seconds per step of each side.
  std::map<std::string, std::array<std::vector<double>, 2>> paired;
};

// A ddpbench binary, or a build folder holding harness/ddpbench; InputError (naming `flag`)
// otherwise.
std::string resolve_ab_binary(const std::string& given, const std::string& flag);

// `run_args` without what ab owns (--out, --repeats, --check-only: InputError) and a leading
// "run". Refused before any run starts.
std::vector<std::string> ab_run_args(std::vector<std::string> run_args);

// Runs the rounds, staging each round's report of both sides in `out` (round01_baseline.json...).
// A build that refuses the arguments (exit 2) is InputError, one that fails otherwise (exit 3 and
// up) WorkerFailure, naming the round, the side and its last line.
AbRounds run_ab_rounds(const std::array<std::string, 2>& binaries,
                       const std::vector<std::string>& run_args, int64_t rounds, uint64_t seed,
                       output::OutputDir& out);

}  // namespace ddpbench::run
