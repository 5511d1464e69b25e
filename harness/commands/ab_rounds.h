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
#include "reports/run/run_record.h"

namespace ddpbench::commands {

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

// Note [Duet rounds]
// The vCPUs of a cloud runner change speed every few seconds (reports/METRICS.md, "Why a fresh
// process is fast or slow here"), so two runs back to back meet different machines: on this
// project's runner the log ratio of two identical toy_cnn ddp x2 runs of 100 steps spread 11.6%
// (sd, 10 pairs). Run at the same time, sharing the machine (duet benchmarking, Bulej et al., ICPE
// 2020), both meet the same speed and the same neighbours: 2.5% on the same pairs' machine,
// the same hour. The price: each build runs beside the other, its ranks on the same cores (rank
// r of both on core r), so a round measures the builds' throughput while sharing the CPUs: a
// build that does more work per step is slower in the duet as alone, but one that only waits
// longer (a slower collective, an idle gap) lends that time to the other and may look less slow
// than it is. Duet rounds answer "does this build compute more per step", back-to-back rounds
// "is each step slower alone"; `ab` says which it ran.

// Runs the rounds, staging each round's report of both sides in `out` (round01_baseline.json...):
// back to back in a drawn, balanced order, or with `duet` both at once. A build that refuses the
// arguments (exit 2) is InputError, one that fails otherwise (exit 3 and up) WorkerFailure,
// naming the round, the side and its last line.
AbRounds run_ab_rounds(const std::array<std::string, 2>& binaries,
                       const std::vector<std::string>& run_args, int64_t rounds, uint64_t seed,
                       bool duet, output::OutputDir& out);

}  // namespace ddpbench::commands
