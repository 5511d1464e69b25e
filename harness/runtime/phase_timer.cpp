// phase_timer.cpp — see phase_timer.h: the host-clock timer.
#include "runtime/phase_timer.h"

#include <chrono>

namespace ddpbench::runtime {

double& phase_slot(metrics::PhaseTimes& times, Phase phase) {
  switch (phase) {
    case Phase::kData:
      return times.data;
    case Phase::kForward:
      return times.forward;
    case Phase::kBackward:
      return times.backward;
    case Phase::kCommWait:
      return times.comm_wait;
    case Phase::kOptimizer:
      return times.optimizer;
  }
  return times.optimizer;
}

namespace {

class HostPhaseTimer : public PhaseTimer {
 public:
  void resume() override { start_ = Clock::now(); }

  void stop(Phase phase) override {
    const double s = std::chrono::duration<double>(Clock::now() - start_).count();
    phase_slot(times_, phase) += s;
    times_.total += s;
  }

  metrics::PhaseTimes finish_step() override {
    const metrics::PhaseTimes done = times_;
    times_ = {};
    return done;
  }

 private:
  using Clock = std::chrono::steady_clock;

  Clock::time_point start_ = Clock::now();
  metrics::PhaseTimes times_;
};

}  // namespace

std::unique_ptr<PhaseTimer> make_host_phase_timer() { return std::make_unique<HostPhaseTimer>(); }

}  // namespace ddpbench::runtime
