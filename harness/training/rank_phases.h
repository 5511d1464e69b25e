// rank_phases.h — the phases of a mode that runs one process per rank (ddp, zero): one skeleton,
// run_rank_phases, runs every such mode's check phase (a fresh model, every step checked, the
// mode's own checks after it) and perf phase (a fresh model, the timed steps), then gathers what
// the report needs from every rank (the slowest rank's times, hosts, memory). What differs between
// the modes is a RankModeDriver: how its path is built, what its check phase adds to the step
// loop's options, and what it records after each phase. One driver per mode, one file each
// (training/ddp_rank.cpp, training/zero_rank.cpp), one row each in rank_phases.cpp's kRankDrivers.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "comm/communicator.h"
#include "modes/common/gradient_path.h"
#include "modes/common/mode_kind.h"
#include "modes/common/step_loop.h"
#include "scenarios/training_recipe.h"
#include "training/collective_accounting.h"
#include "training/mode_outcome.h"
#include "training/phase_inputs.h"

namespace ddpbench::training {

using PhaseObserver = std::function<void(int64_t step, modes::StepPhase)>;

// One per-rank mode's part in run_rank_phases. The path each method is given is the one
// make_path returned (a driver may downcast it to its own type).
class RankModeDriver {
 public:
  virtual ~RankModeDriver() = default;
  virtual modes::ModeKind mode() const = 0;
  // A path over a fresh instance: for the check phase (`checking`: the run's fault goes in, and
  // the checks record) or for the perf phase.
  virtual std::unique_ptr<modes::GradientPath> make_path(scenarios::ScenarioInstance& instance,
                                                         bool checking) = 0;
  // What the check phase adds to the step loop's options (checkpoints, faults the loop injects).
  virtual void add_check_options(modes::GradientPath& path, modes::TrainOptions& options,
                                 ModeOutcome& o) = 0;
  // Whether the check phase measures autocast against float32 steps (training/float32_shadow.h).
  virtual bool measures_amp() const = 0;
  // After the check phase: the mode's own checks (o.extra_checks) and records (evaluation).
  virtual void after_check(modes::GradientPath& path, ModeOutcome& o) = 0;
  // After either phase: what the path records of itself (bytes per step, buckets).
  virtual void record_path(modes::GradientPath& path, ModeOutcome& o) = 0;
  // What the path's reduction must issue (Note [Collective accounting]); none: not judged.
  virtual std::optional<ReductionRule> reduction_rule(modes::GradientPath& /*path*/) const {
    return std::nullopt;
  }
};

// The driver of `mode` (one that runs per rank) for this rank's phases over `comm`, from its row
// in rank_phases.cpp's kRankDrivers; whether `mode` has one.
std::unique_ptr<RankModeDriver> rank_driver(modes::ModeKind mode, const PhaseInputs& in,
                                            comm::Communicator& comm);
bool has_rank_driver(modes::ModeKind mode);

// One rank's phases of `driver`'s mode over `comm` (collective: every rank calls it). `on_phase`
// sees every step phase of both phases with run-wide step numbers (perf steps follow the checked
// ones).
ModeOutcome run_rank_phases(const PhaseInputs& in, comm::Communicator& comm,
                            const PhaseObserver& on_phase, RankModeDriver& driver);

// run_rank_phases with rank_driver(mode).
ModeOutcome run_rank_mode(const PhaseInputs& in, modes::ModeKind mode, comm::Communicator& comm,
                          const PhaseObserver& on_phase);

}  // namespace ddpbench::training
