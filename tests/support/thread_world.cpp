// thread_world.cpp — see thread_world.h.
#include "support/thread_world.h"

#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "dist/gloo_communicator.h"
#include "dist/store.h"

namespace ddpbench::testing {

void run_ranks(int world_size, const std::function<void(dist::Communicator& comm)>& body) {
  auto server = dist::Store::serve("127.0.0.1", 0, std::chrono::seconds(60));
  std::mutex mu;
  std::exception_ptr first_error;
  std::vector<std::thread> threads;
  for (int r = 0; r < world_size; ++r) {
    threads.emplace_back([&, r] {
      try {
        auto store = dist::Store::connect("127.0.0.1", server->port(), std::chrono::seconds(60));
        auto comm = dist::make_gloo_communicator(
            store, {r, world_size, "127.0.0.1", std::chrono::seconds(60)});
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
