// world_join.cpp — see world_join.h.
#include "launch/world_join.h"

#include <fmt/format.h>

#include <cstdio>

#include "comm/communicator_factory.h"
#include "comm/mpi_communicator.h"
#include "comm/mpi_rendezvous.h"
#include "errors.h"
#include "launch/signal_cleanup.h"

namespace ddpbench::launch {
namespace {

// What a rank that could not meet its peers through MASTER_ADDR:MASTER_PORT says: the address,
// the time it waited and the library's reason. A listener that is not rank 0's store (another
// program on the port) fails in the store client (torch 2.x) or only at the first store operation,
// with a bare "Socket Timeout" (1.13): both are named this way.
WorkerFailure rendezvous_failure(const WorldInfo& w, std::chrono::milliseconds timeout,
                                 const char* verb, const std::string& what) {
  return WorkerFailure(fmt::format(
      "rank {} ({}) could not {} the rendezvous store at {}:{} within {} s ({}): check "
      "MASTER_ADDR / MASTER_PORT, that rank 0 runs, and that no other program listens there",
      w.rank, launcher_name(w.launcher), verb, w.master_addr, w.master_port,
      std::chrono::duration_cast<std::chrono::seconds>(timeout).count(),
      what.substr(0, what.find('\n'))));
}

// The store and where it listens (the heartbeats connect there too; port 0 for a file store).
struct JoinedStore {
  std::shared_ptr<comm::Store> store;
  std::string host;
  int port = 0;
};

JoinedStore join_store(const WorldInfo& w, comm::Backend backend,
                       std::chrono::milliseconds timeout) {
  if (w.launcher == Launcher::kDdpbench) return {comm::Store::open_file(w.store_file, timeout)};
  // The mpi backend meets through MPI under any MPI launcher; its store, found the same way,
  // carries only the heartbeats.
  if (comm::traits(backend).needs_mpi_launcher ||
      (w.launcher == Launcher::kOpenMpi && w.master_addr.empty())) {
    try {
      comm::MpiRendezvous r = comm::mpi_rendezvous_store(w.rank, timeout);
      return {std::move(r.store), r.host, r.port};
    } catch (const std::exception& e) {
      throw WorkerFailure(
          fmt::format("rank {} ({}): {}", w.rank, launcher_name(w.launcher),
                      std::string(e.what()).substr(0, std::string(e.what()).find('\n'))));
    }
  }
  if (w.master_addr.empty() || w.master_port == 0) {
    throw InputError(fmt::format(
        "rank {} ({}): MASTER_ADDR and MASTER_PORT are needed for the rendezvous; export them "
        "(e.g. MASTER_ADDR=<rank 0 host> MASTER_PORT=29500)",
        w.rank, launcher_name(w.launcher)));
  }
  // Rank 0 serves the store, as torchrun's c10d rendezvous does; the others connect to it. Where
  // torchrun's agent already serves it there, every rank connects, into PyTorch's prefix (the
  // port is taken: rank 0 serving it would fail "address already in use").
  try {
    if (!w.agent_store_prefix.empty()) {
      return {comm::Store::connect(w.master_addr, w.master_port, timeout)
                  ->prefixed(w.agent_store_prefix),
              w.master_addr, w.master_port};
    }
    if (w.rank == 0) {
      return {comm::Store::serve(w.master_addr, w.master_port, timeout), w.master_addr,
              w.master_port};
    }
    return {comm::Store::connect(w.master_addr, w.master_port, timeout), w.master_addr,
            w.master_port};
  } catch (const std::exception& e) {
    throw rendezvous_failure(
        w, timeout, w.rank == 0 && w.agent_store_prefix.empty() ? "serve" : "reach", e.what());
  }
}

bool is_loopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

// The collective a stalled rank is in: the oldest its ring holds as not done.
const comm::FlightEntry* oldest_pending(const comm::FlightLog& log) {
  for (const comm::FlightEntry& e : log.entries) {
    if (e.state != comm::FlightState::kDone) return &e;
  }
  return nullptr;
}

// Per Note [An MPI job ends by MPI_Abort]: an MPI collective past --timeout will never end, so
// this rank names itself, the collective and the peer to blame, removes what it staged, and ends
// the job.
[[noreturn]] void end_stalled_job(const WorldInfo& w, const JoinedWorld& joined,
                                  const std::string& call, std::chrono::milliseconds waited) {
  const comm::FlightLog log = joined.recorder->snapshot();
  const comm::FlightEntry* stuck = oldest_pending(log);
  std::string collective = call;
  if (stuck != nullptr) {
    const std::string where = comm::where_text(*stuck);
    collective = fmt::format("collective #{}, {}{}", stuck->seq, comm::describe_fingerprint(*stuck),
                             where.empty() ? "" : " (" + where + ")");
  }
  const std::string headline = fmt::format(
      "{} not done after {:.1f} s (--timeout): {} cannot be cancelled, so the MPI job is aborted",
      collective, waited.count() / 1e3, call);
  const std::string message = explain_stalled_collective(joined.store.get(), joined.heartbeat.get(),
                                                         w, headline, stuck ? stuck->seq : -1);
  std::fprintf(stderr, "ddpbench: worker failure: %s\n", message.c_str());
  SignalCleanup::process().undo_for_abort();
  comm::abort_mpi_job(kExitWorkerFailed);
}

}  // namespace

JoinedWorld join_world(const WorldInfo& world, comm::Backend backend,
                       std::chrono::milliseconds timeout, const comm::RecordingOptions& recording) {
  const bool spawned = world.launcher == Launcher::kDdpbench;
  JoinedWorld joined;
  const JoinedStore store = join_store(world, backend, timeout);
  joined.store = store.store;
  joined.recorder = std::make_shared<comm::FlightRecorder>(world.rank, world.flight_file);
  comm::CommunicatorRequest request;
  request.backend = backend;
  request.rank = world.rank;
  request.world_size = world.world_size;
  request.store = joined.store;
  request.shm_prefix = world.shm_prefix;
  // gloo listens on this address: loopback for a loopback rendezvous, the --master-addr given for
  // workers spawned on this machine, and the host's own name otherwise (a multi-host run).
  request.interface_address = is_loopback(world.master_addr) ? "127.0.0.1"
                              : spawned                      ? world.master_addr
                                                             : "";
  // Spawned ranks have a parent that watches their progress and names a hung rank at --timeout:
  // their collectives get 30 s more, so that the parent's clearer verdict comes first. A rank
  // started by another launcher has no such parent: --timeout is its own limit, for the
  // rendezvous and every collective alike.
  request.timeout = spawned ? timeout + std::chrono::seconds(30) : timeout;
  // What the handler needs outlives the communicator: it holds them (the heartbeat from when it
  // starts, below; no MPI collective runs before).
  const auto stalled =
      std::make_shared<JoinedWorld>(JoinedWorld{joined.store, nullptr, joined.recorder, nullptr});
  request.mpi_on_stall = [world, stalled](const std::string& call,
                                          std::chrono::milliseconds waited) {
    end_stalled_job(world, *stalled, call, waited);
  };
  // The communicator's own rendezvous is the first use of a TCP store: a failure there is the
  // store's address failing too, and is named as such.
  const bool tcp_store = joined.store && !spawned && !world.master_addr.empty();
  try {
    comm::RecordingOptions options = recording;
    options.splitter = [request](const comm::SplitGroup& group) {
      return comm::make_split_communicator(request, group);
    };
    joined.comm = comm::make_recording_communicator(comm::make_communicator(request),
                                                    joined.recorder, options);
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    if (!tcp_store) throw;
    throw rendezvous_failure(world, timeout, "meet its peers through", e.what());
  }
  // Spawned ranks have a parent that watches them; the others beat in the store. Only now: the
  // communicator's rendezvous has proven that a store answers there (mpi's store is rank 0's own,
  // found through MPI). 1.13's TCPStore::add waits without a deadline on a listener that is not a
  // store, and the heartbeat's thread would hold the rank forever.
  if (!spawned && store.port != 0) {
    joined.heartbeat =
        std::make_shared<Heartbeat>(world, store.host, store.port, joined.recorder, timeout);
    stalled->heartbeat = joined.heartbeat;
  }
  return joined;
}

}  // namespace ddpbench::launch
