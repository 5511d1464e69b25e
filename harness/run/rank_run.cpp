// rank_run.cpp — see rank_run.h.
#include "run/rank_run.h"

#include <fmt/format.h>
#include <signal.h>
#include <torch/torch.h>

#include <optional>

#include "comm/mpi_communicator.h"
#include "errors.h"
#include "launch/core_pinning.h"
#include "launch/environment.h"
#include "launch/peer_loss.h"
#include "launch/ring_comparison.h"
#include "launch/signal_cleanup.h"
#include "launch/worker_group.h"
#include "launch/world_join.h"
#include "output/output_dir.h"
#include "run/finish_run.h"
#include "run/prepare_run.h"
#include "run/shared_checks.h"
#include "training/mode_phases.h"
#include "training/outcome_codec.h"
#include "training/rank_phases.h"
#include "training/reference_runs.h"

namespace ddpbench::run {

namespace {

// Where rank `rank` is, for its flight recorder and, when a ddpbench parent watches it (`store`
// not null), for the parent as "step:phase:words". The step counts both phases (so progress only
// grows); people read it per phase.
std::function<void(int64_t, modes::StepPhase)> progress_reporter(comm::Store* store,
                                                                 comm::FlightRecorder& recorder,
                                                                 const training::RunSetup& setup,
                                                                 int rank) {
  return [store, &recorder, &setup, rank](int64_t step, modes::StepPhase phase) {
    const bool checking = step < setup.check_steps;
    const int64_t in_phase = checking ? step : step - setup.check_steps;
    const int64_t of = checking ? setup.check_steps : setup.warmup_steps + setup.perf_steps;
    const std::string words = fmt::format("{} phase step {} of {}, {}", checking ? "check" : "perf",
                                          in_phase, of, modes::step_phase_name(phase));
    recorder.set_where(step, words);
    if (store != nullptr) {
      store->set(launch::progress_key(rank),
                 fmt::format("{}:{}:{}", step, static_cast<int>(phase), words));
    }
  };
}

// Under another launcher no parent reads the rings: a failing rank names its own last collective.
std::string last_collective(const comm::FlightRecorder& recorder) {
  const comm::FlightLog log = recorder.snapshot();
  if (log.entries.empty()) return "";
  const comm::FlightEntry& e = log.entries.back();
  const std::string where = comm::where_text(e);
  return fmt::format("; this rank's last collective: #{}, {}{}, {}", e.seq,
                     comm::describe_fingerprint(e), where.empty() ? "" : " (" + where + ")",
                     comm::flight_state_name(e.state));
}

// What this rank's communicator records, checks (--debug-collectives) and, under a desync or
// shape fault aimed at it, changes.
comm::RecordingOptions recording_options(const training::RunSetup& setup, int rank) {
  comm::RecordingOptions o;
  o.verify_fingerprints = setup.debug_collectives;
  if (setup.fault && setup.fault->rank == rank) {
    if (setup.fault->kind == modes::FaultKind::kDesync) o.fault = comm::CollectiveFault::kSkip;
    if (setup.fault->kind == modes::FaultKind::kShape) o.fault = comm::CollectiveFault::kShorten;
    o.fault_step = setup.fault->step;
  }
  return o;
}

// A spawned group runs the one mode its parent spawned it for; an external launch every per-rank
// mode of --modes in turn, over the one world it joined.
std::vector<modes::ModeKind> modes_of_this_world(const training::RunSetup& setup,
                                                 const launch::WorldInfo& world, bool spawned) {
  if (!spawned || world.rank_mode.empty()) return modes::per_rank_modes(setup.modes);
  const std::optional<modes::ModeKind> mode = modes::parse_mode(world.rank_mode);
  if (!mode || !modes::runs_per_rank(*mode)) {
    throw std::logic_error("spawned for an unknown per-rank mode: " + world.rank_mode);
  }
  return {*mode};
}

// The collective a failing rank's collective failure is about: the oldest its ring holds as not
// done (failed, or still waited on); -1 when there is none.
int64_t failed_seq(const comm::FlightRecorder& recorder) {
  for (const comm::FlightEntry& e : recorder.snapshot().entries) {
    if (e.state != comm::FlightState::kDone) return e.seq;
  }
  return -1;
}

// This rank's share of the cores its local world is allowed, where there is a share to give.
void pin_rank_cores(const requests::RunRequest& request, const launch::WorldInfo& world) {
  if (const auto cores = launch::rank_cores(world.local_rank, world.world_size,
                                            threads_per_process(request, world.world_size),
                                            launch::allowed_cores())) {
    launch::pin_process(*cores);
  }
}

// This world's per-rank modes in turn, each rank's outcome kept; a failure is rethrown as the
// failure this rank reports (its own, or under another launcher the peer it lost).
std::vector<training::ModeOutcome> train_rank_modes(
    const training::PhaseInputs& in, const launch::WorldInfo& world, bool spawned,
    launch::JoinedWorld& joined, const std::function<void(int64_t, modes::StepPhase)>& on_phase) {
  std::vector<training::ModeOutcome> ranked;
  try {
    for (modes::ModeKind mode : modes_of_this_world(in.setup, world, spawned)) {
      ranked.push_back(training::run_rank_mode(in, mode, *joined.comm, on_phase));
    }
  } catch (const InputError&) {
    throw;
  } catch (const WorkerFailure& e) {
    // A failure of this rank's own (a crash, a non-finite loss): the peers name it with its
    // reason, not as a rank that stopped without a word.
    if (!spawned) launch::mark_own_failure(joined.store.get(), world.rank, e.what());
    throw;
  } catch (const std::exception& e) {
    // A spawned rank's parent names the rank that failed; under an external launcher each rank
    // has to work out itself which peer was lost.
    if (spawned) throw;
    throw WorkerFailure(launch::explain_collective_failure(joined.store.get(),
                                                           joined.heartbeat.get(), world, e.what(),
                                                           failed_seq(*joined.recorder)) +
                        last_collective(*joined.recorder));
  }
  return ranked;
}

int train_as_rank(const requests::RunRequest& request, const scenarios::ScenarioRegistry& registry,
                  const launch::WorldInfo& world, const std::vector<std::string>& argv) {
  using modes::ModeKind;
  const bool spawned = world.launcher == launch::Launcher::kDdpbench;
  // Under another launcher, a SIGTERM is most often that launcher ending the job another rank
  // failed: the line it leaves names this rank.
  if (!spawned) launch::SignalCleanup::process().set_speaker(fmt::format("rank {}", world.rank));
  // Pinned before libtorch starts its thread pool, which inherits the cores (Note [Pinned ranks]).
  if (spawned && !request.no_pin_cores) pin_rank_cores(request, world);
  std::optional<PreparedRun> prepared = prepare_run(request, registry, world);
  if (!prepared) return kExitOk;  // the scenario cannot run here; prepare_run said why
  const training::RunSetup& setup = prepared->setup;
  const runtime::ExecutionContext& context = prepared->context;
  const std::shared_ptr<const data::Dataset>& dataset = prepared->dataset;
  const data::GlobalBatchPlan& plan = prepared->plan;
  const modes::GradRecordKind grad = prepared->grad;

  // Rank 0 of an external launch writes the report: prove --out usable before any training.
  std::optional<output::OutputDir> out;
  if (!spawned && world.rank == 0) out.emplace(setup.out);
  launch::JoinedWorld joined =
      launch::join_world(world, setup.backend, setup.timeout, recording_options(setup, world.rank));

  const training::PhaseInputs in{setup, context, dataset, plan, grad, prepared->on_device.get()};

  // Every rank tells its flight recorder where it is; a spawned one also tells the parent, so
  // that it can name a rank that stops progressing.
  const std::function<void(int64_t, modes::StepPhase)> on_phase = progress_reporter(
      spawned ? joined.store.get() : nullptr, *joined.recorder, setup, world.rank);
  std::vector<training::ModeOutcome> ranked =
      train_rank_modes(in, world, spawned, joined, on_phase);
  // A ddpbench parent compares its ranks' rings itself (launch/worker_group.h).
  if (!spawned) {
    if (const auto finding = launch::compare_rings(*joined.comm, *joined.recorder)) {
      throw WorkerFailure(fmt::format(
          "rank {}: every rank finished, but not the same collectives; flight recorder: {}",
          world.rank, finding->summary));
    }
  }
  if (world.rank != 0) return kExitOk;
  if (spawned) {
    launch::send_result(*joined.store, training::encode_outcome(ranked.front()));
    return kExitOk;
  }
  std::vector<training::ModeOutcome> outcomes;
  std::vector<training::ReferenceOutcome> references;
  const scenarios::ScenarioInstance& fresh = prepared->instance;
  if (setup.has_mode(ModeKind::kSingle)) {
    outcomes.push_back(training::run_local_mode(in, ModeKind::kSingle));
    references = training::run_exact_references(in, *fresh.model.ptr());
  }
  for (training::ModeOutcome& o : ranked) outcomes.push_back(std::move(o));
  return finish_run(setup, context,
                    {dataset->describe(), &plan, modes::grad_record_name(grad), argv,
                     fresh.model.ptr().get(), &in},
                    std::move(outcomes), references, *out);
}

}  // namespace

int run_as_rank(const requests::RunRequest& request, const scenarios::ScenarioRegistry& registry,
                const launch::WorldInfo& world, const std::vector<std::string>& argv) {
  // A write to a dead peer's socket (gloo's TCP pairs) must fail as an error this rank reports
  // as a lost peer, not kill it with SIGPIPE: a rank killed so looks like a cause, and the
  // parent or a torchrun log would blame it instead of the peer that died first.
  signal(SIGPIPE, SIG_IGN);
  try {
    return train_as_rank(request, registry, world, argv);
  } catch (const InputError&) {
    comm::abort_mpi_job_at_exit(kExitBadInput);  // Note [An MPI job ends by MPI_Abort]
    throw;
  } catch (...) {
    comm::abort_mpi_job_at_exit(kExitWorkerFailed);
    throw;
  }
}

}  // namespace ddpbench::run
