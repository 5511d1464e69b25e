// thread_world.cpp — see thread_world.h.
#include "support/thread_world.h"

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/communicator_factory.h"
#include "comm/store.h"

namespace ddpbench::testing {

void run_ranks(int world_size, const std::function<void(comm::Communicator& comm)>& body,
               const std::string& backend) {
  auto server = comm::Store::serve("127.0.0.1", 0, std::chrono::seconds(60));
  std::mutex mu;
  std::exception_ptr first_error;
  std::vector<std::thread> threads;
  for (int r = 0; r < world_size; ++r) {
    threads.emplace_back([&, r] {
      try {
        comm::CommunicatorRequest request;
        request.backend = backend;
        request.rank = r;
        request.world_size = world_size;
        request.store = comm::Store::connect("127.0.0.1", server->port(), std::chrono::seconds(60));
        request.interface_address = "127.0.0.1";
        request.timeout = std::chrono::seconds(60);
        auto comm = comm::make_communicator(request);
        body(*comm);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!first_error) first_error = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace ddpbench::testing
