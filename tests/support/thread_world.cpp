// thread_world.cpp — see thread_world.h.
#include "support/thread_world.h"

#include "comm/communicator_factory.h"
#include "comm/store.h"
#include "runtime/worker_pool.h"

namespace ddpbench::testing {

void run_ranks(int world_size, const std::function<void(comm::Communicator& comm)>& body,
               comm::Backend backend) {
  auto server = comm::Store::serve("127.0.0.1", 0, std::chrono::seconds(60));
  runtime::WorkerPool(world_size).run([&](int64_t r) {
    comm::CommunicatorRequest request;
    request.backend = backend;
    request.rank = static_cast<int>(r);
    request.world_size = world_size;
    request.store = comm::Store::connect("127.0.0.1", server->port(), std::chrono::seconds(60));
    request.interface_address = "127.0.0.1";
    request.timeout = std::chrono::seconds(60);
    request.cuda_device = static_cast<int>(r);  // nccl: one device per rank (callers ask <= count)
    auto comm = comm::make_communicator(request);
    body(*comm);
  });
}

}  // namespace ddpbench::testing
