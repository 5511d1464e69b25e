// judge_mode.h — one mode's result in the report: its figures from what it produced, its checks
// against its exact reference (and zero's against ddp in the same run), the rounding floor
// measured on demand for a comparison that failed at its fixed limits, its ranks' own checks, and
// the injected_fault check of a fault no check caught.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "output/output_dir.h"
#include "reports/run/run_record.h"
#include "run/run_description.h"
#include "training/mode_outcome.h"
#include "training/reference_runs.h"
#include "training/run_setup.h"

namespace ddpbench::run {

class FloorsOnDemand;

// The perf-phase figures of one mode (formulas in reports/METRICS.md).
reports::ThroughputRecord throughput_of(const training::RunSetup& setup,
                                        const training::ModeOutcome& outcome);

class ModeJudge {
 public:
  // `outcomes` holds every mode of the run (single's is the scaling baseline and, when plain,
  // the reference); `references` the exact references trained apart.
  ModeJudge(const training::RunSetup& setup, const RunDescription& run,
            const std::vector<training::ModeOutcome>& outcomes,
            const std::vector<training::ReferenceOutcome>& references);
  ~ModeJudge();

  // `o`'s result, judged; a reference's state file it names is staged into `out`.
  reports::ModeResult judge(const training::ModeOutcome& o, output::OutputDir& out);

 private:
  // The figures `o` produced: losses, times, throughput and scaling, engine figures, memory.
  reports::ModeResult figures(const training::ModeOutcome& o) const;
  void against_reference(const training::ModeOutcome& o, reports::ModeResult& r,
                         output::OutputDir& out);
  void against_ddp(const training::ModeOutcome& o, reports::ModeResult& r);

  const training::RunSetup& setup_;
  const RunDescription& run_;
  const std::vector<training::ReferenceOutcome>& references_;
  const training::ModeOutcome* single_ = nullptr;
  const training::ModeOutcome* ddp_ = nullptr;
  // The scaling baseline: single's samples/s, when it was timed.
  std::optional<double> single_samples_per_s_;
  std::unique_ptr<FloorsOnDemand> floors_;
};

}  // namespace ddpbench::run
