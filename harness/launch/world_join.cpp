// world_join.cpp — see world_join.h.
#include "launch/world_join.h"

#include <fmt/format.h>

#include "comm/communicator_factory.h"
#include "comm/mpi_rendezvous.h"
#include "errors.h"

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

std::shared_ptr<comm::Store> join_store(const WorldInfo& w, std::chrono::milliseconds timeout) {
  if (w.launcher == Launcher::kDdpbench) return comm::Store::open_file(w.store_file, timeout);
  if (w.launcher == Launcher::kOpenMpi && w.master_addr.empty()) {
    return comm::mpi_rendezvous_store(w.rank, timeout);
  }
  if (w.master_addr.empty() || w.master_port == 0) {
    throw InputError(fmt::format(
        "rank {} ({}): MASTER_ADDR and MASTER_PORT are needed for the rendezvous; export them "
        "(e.g. MASTER_ADDR=<rank 0 host> MASTER_PORT=29500)",
        w.rank, launcher_name(w.launcher)));
  }
  // Rank 0 serves the store, as torchrun's c10d rendezvous does; the others connect to it.
  try {
    if (w.rank == 0) return comm::Store::serve(w.master_addr, w.master_port, timeout);
    return comm::Store::connect(w.master_addr, w.master_port, timeout);
  } catch (const std::exception& e) {
    throw rendezvous_failure(w, timeout, w.rank == 0 ? "serve" : "reach", e.what());
  }
}

bool is_loopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

}  // namespace

JoinedWorld join_world(const WorldInfo& world, comm::Backend backend,
                       std::chrono::milliseconds timeout, const comm::RecordingOptions& recording) {
  JoinedWorld joined;
  // An MPI backend rendezvouses through mpirun itself; everything else through a store.
  if (!comm::traits(backend).needs_mpi_launcher) joined.store = join_store(world, timeout);
  comm::CommunicatorRequest request;
  request.backend = backend;
  request.rank = world.rank;
  request.world_size = world.world_size;
  request.store = joined.store;
  request.shm_prefix = world.shm_prefix;
  // gloo listens on this address: loopback for a loopback rendezvous, the --master-addr given for
  // workers spawned on this machine, and the host's own name otherwise (a multi-host run).
  request.interface_address = is_loopback(world.master_addr)          ? "127.0.0.1"
                              : world.launcher == Launcher::kDdpbench ? world.master_addr
                                                                      : "";
  // Spawned ranks have a parent that watches their progress and names a hung rank at --timeout:
  // their collectives get 30 s more, so that the parent's clearer verdict comes first. A rank
  // started by another launcher has no such parent: --timeout is its own limit, for the
  // rendezvous and every collective alike.
  request.timeout =
      world.launcher == Launcher::kDdpbench ? timeout + std::chrono::seconds(30) : timeout;
  // The communicator's own rendezvous is the first use of a TCP store: a failure there is the
  // store's address failing too, and is named as such.
  const bool tcp_store =
      joined.store && world.launcher != Launcher::kDdpbench && !world.master_addr.empty();
  try {
    joined.recorder = std::make_shared<comm::FlightRecorder>(world.rank, world.flight_file);
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
  return joined;
}

}  // namespace ddpbench::launch
