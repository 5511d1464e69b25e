// rank_phases.cpp — see rank_phases.h.
#include "training/rank_phases.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>

#include "launch/environment.h"
#include "modes/ranks/rank_agreement.h"
#include "training/phase_steps.h"

namespace ddpbench::training {
namespace {

using modes::ModeKind;

// Every rank's host name, in rank order: a multi-host run's report says where each rank ran.
std::vector<std::string> rank_hosts(comm::Communicator& comm) {
  constexpr int64_t kMax = 64;  // a fixed size, so every rank's tensor matches; 0-terminated
  const std::string name = launch::host_name().substr(0, kMax - 1);
  at::Tensor mine = at::zeros({kMax}, at::kByte);
  std::memcpy(mine.data_ptr<uint8_t>(), name.data(), name.size());
  std::vector<std::string> hosts;
  for (const at::Tensor& t : comm.allgather(mine)) {
    const at::Tensor c = t.cpu().contiguous();
    hosts.emplace_back(reinterpret_cast<const char*>(c.data_ptr<uint8_t>()));
  }
  return hosts;
}

// Every rank's peak device memory, in rank order (empty on the CPU). Every rank trains on the same
// kind of device (one request), so all or none join the gather.
std::vector<int64_t> every_rank_peak_memory(const PhaseInputs& in, comm::Communicator& comm) {
  if (!in.context.on_cuda()) return {};
  const at::Tensor peak = at::tensor(in.context.peak_memory_bytes(1), at::kLong);
  const at::Tensor all = at::cat(comm.allgather(peak)).cpu();
  return {all.data_ptr<int64_t>(), all.data_ptr<int64_t>() + all.numel()};
}

// Collective: every rank's footprint, in rank order.
std::vector<reports::RankMemoryRecord> every_rank_memory(comm::Communicator& comm,
                                                         const modes::MemoryFootprint& f) {
  const at::Tensor mine = at::tensor(
      {f.parameter_bytes, f.gradient_bytes, f.optimizer_state_bytes, f.peak_rss_bytes}, at::kLong);
  std::vector<reports::RankMemoryRecord> out;
  const std::vector<at::Tensor> all = comm.allgather(mine);
  for (size_t r = 0; r < all.size(); ++r) {
    const at::Tensor c = all[r].cpu();
    const int64_t* v = c.data_ptr<int64_t>();
    out.push_back({static_cast<int64_t>(r), v[0], v[1], v[2], v[3]});
  }
  return out;
}

// A per-rank mode's outcome before its phases: what the setup says of it.
ModeOutcome rank_outcome(const PhaseInputs& in, ModeKind mode) {
  const RunSetup& s = in.setup;
  ModeOutcome o;
  o.mode = mode;
  o.world_size = s.world_size;
  o.backend = comm::backend_name(s.backend);
  o.perf_samples_per_step = in.plan.mean_samples_per_step(s.warmup_steps, s.perf_steps);
  return o;
}

// Every rank's timed steps as compute and wait (Note [Stragglers]); none when the run timed
// nothing.
std::vector<reports::RankTimingRecord> rank_timings(
    const std::vector<std::vector<metrics::PhaseTimes>>& by_rank) {
  std::vector<reports::RankTimingRecord> ranks;
  for (size_t r = 0; r < by_rank.size() && !by_rank[r].empty(); ++r) {
    reports::RankTimingRecord rank;
    rank.rank = static_cast<int64_t>(r);
    for (const metrics::PhaseTimes& t : by_rank[r]) {
      rank.compute_s.push_back(std::max(0.0, t.total - t.comm_wait));
      rank.comm_wait_s.push_back(t.comm_wait);
    }
    ranks.push_back(std::move(rank));
  }
  return ranks;
}

// Collective, after a per-rank mode's phases: the slowest rank's times, the hosts, the device
// peaks and every rank's footprint into `o`.
void finish_rank_outcome(const PhaseInputs& in, comm::Communicator& comm, ModeOutcome& o,
                         const std::vector<metrics::PhaseTimes>& check_times,
                         const std::vector<metrics::PhaseTimes>& perf_times,
                         const modes::MemoryFootprint& footprint) {
  o.check_times = modes::ranks::slowest_of(modes::ranks::every_rank_times(comm, check_times));
  const auto perf_by_rank = modes::ranks::every_rank_times(comm, perf_times);
  o.perf_times = modes::ranks::slowest_of(perf_by_rank);
  o.rank_timings = rank_timings(perf_by_rank);
  o.hosts = rank_hosts(comm);
  o.peak_device_memory_bytes = every_rank_peak_memory(in, comm);
  o.memory = every_rank_memory(comm, footprint);
}

// A per-rank mode's perf phase options: run-wide step numbers for `on_phase` (perf steps follow
// the checked ones), the footprint after its last step, and the `slow` fault on its rank
// (`slowall`: on every rank).
modes::TrainOptions rank_perf_options(const PhaseInputs& in, ModeKind mode, int64_t rank,
                                      const PhaseObserver& on_phase,
                                      modes::MemoryFootprint& footprint) {
  modes::TrainOptions options = accumulating(perf_options(in), in.setup, mode);
  if (modes::fault_on_rank(in.setup.fault, modes::FaultKind::kSlow, rank) ||
      (in.setup.fault && in.setup.fault->kind == modes::FaultKind::kSlowAll)) {
    options.slow_ms = in.setup.fault->ms;
  }
  options.on_phase = [&on_phase, offset = in.setup.check_steps](int64_t step, modes::StepPhase p) {
    if (on_phase) on_phase(offset + step, p);
  };
  measure_after(options, options.steps - 1, footprint);
  return options;
}

// The sched and decay faults on their rank: they go into the optimizer step the loop takes.
void arm_optimizer_faults(const RunSetup& s, int64_t rank, modes::TrainOptions& options) {
  if (modes::fault_on_rank(s.fault, modes::FaultKind::kSched, rank)) {
    options.schedule_ahead_step = s.fault->step;
  }
  if (modes::fault_on_rank(s.fault, modes::FaultKind::kDecay, rank)) {
    options.decay_everything_step = s.fault->step;
  }
}

}  // namespace

// Each per-rank mode's driver, defined in its own file (training/<mode>_rank.cpp) and named only
// in its row below.
std::unique_ptr<RankModeDriver> make_ddp_driver(const PhaseInputs& in, comm::Communicator& comm);
std::unique_ptr<RankModeDriver> make_zero_driver(const PhaseInputs& in, comm::Communicator& comm);

namespace {

// One driver row per per-rank mode: each mode whose kModeSpecs row says it runs one process per
// rank has its driver here (training/<mode>_rank.cpp); adding such a mode is its row here (and its
// declaration above), not a case in code that dispatches. has_rank_driver lets a test hold every
// per-rank mode to it.
using DriverFactory = std::unique_ptr<RankModeDriver> (*)(const PhaseInputs&, comm::Communicator&);
constexpr std::pair<ModeKind, DriverFactory> kRankDrivers[] = {
    {ModeKind::kDdp, make_ddp_driver},
    {ModeKind::kZero, make_zero_driver},
};

DriverFactory driver_factory(ModeKind mode) {
  for (const auto& [m, factory] : kRankDrivers) {
    if (m == mode) return factory;
  }
  return nullptr;
}

}  // namespace

bool has_rank_driver(ModeKind mode) { return driver_factory(mode) != nullptr; }

std::unique_ptr<RankModeDriver> rank_driver(ModeKind mode, const PhaseInputs& in,
                                            comm::Communicator& comm) {
  const DriverFactory factory = driver_factory(mode);
  if (factory == nullptr) {
    throw std::logic_error(std::string("rank_driver: ") + modes::mode_name(mode) +
                           " has no per-rank driver (training/rank_phases.cpp's kRankDrivers)");
  }
  return factory(in, comm);
}

ModeOutcome run_rank_phases(const PhaseInputs& in, comm::Communicator& comm,
                            const PhaseObserver& on_phase, RankModeDriver& driver) {
  const RunSetup& s = in.setup;
  const ModeKind mode = driver.mode();
  ModeOutcome o = rank_outcome(in, mode);
  in.context.reset_peak_memory(1);
  modes::MemoryFootprint footprint;  // after the last step of the last phase
  std::vector<metrics::PhaseTimes> check_times;
  if (s.check_steps > 0) {
    scenarios::ScenarioInstance instance = fresh_instance(in);
    const std::unique_ptr<modes::GradientPath> path = driver.make_path(instance, true);
    modes::TrainOptions options = accumulating(check_options(in), s, mode);
    arm_optimizer_faults(s, comm.rank(), options);
    CollectiveAccounting accounting(comm);  // Note [Collective accounting]
    options.on_phase = accounting.observe(on_phase);
    driver.add_check_options(*path, options, o);
    measure_after(options, s.check_steps - 1, footprint);
    // Every rank traces (stage 3 gathers its state for the trace on all of them); rank 0's goes
    // into the outcome.
    const std::unique_ptr<modes::StepTrace> trace = traced(in, options);
    keep_check(o, train_checked(in, mode, *path, options, &comm, driver.measures_amp(), o),
               path->module(), options.first_step);
    if (trace && comm.rank() == 0) keep_trace(o, *trace);
    check_times = std::move(o.check_times);
    driver.record_path(*path, o);
    driver.after_check(*path, o);
    const std::vector<StepCollectives> steps = accounting.finish();
    if (comm.rank() == 0) {
      o.collectives = collective_records(steps);
    }
    if (const std::optional<ReductionRule> rule = driver.reduction_rule(*path)) {
      o.extra_checks.push_back(collective_count_check(comm, steps, *rule));
    }
  }
  std::vector<metrics::PhaseTimes> perf_times;
  if (s.perf_steps > 0) {
    scenarios::ScenarioInstance instance = fresh_instance(in);
    const std::unique_ptr<modes::GradientPath> path = driver.make_path(instance, false);
    const modes::TrainOptions options =
        rank_perf_options(in, mode, comm.rank(), on_phase, footprint);
    perf_times = timed_part(modes::train(*path, train_inputs(in, in.plan), options).step_times,
                            s.warmup_steps);
    driver.record_path(*path, o);
  }
  finish_rank_outcome(in, comm, o, check_times, perf_times, footprint);
  return o;
}

ModeOutcome run_rank_mode(const PhaseInputs& in, ModeKind mode, comm::Communicator& comm,
                          const PhaseObserver& on_phase) {
  const std::unique_ptr<RankModeDriver> driver = rank_driver(mode, in, comm);
  return run_rank_phases(in, comm, on_phase, *driver);
}

}  // namespace ddpbench::training
