// parallel_for.cpp — see parallel_for.h.
#include "runtime/parallel_for.h"

#include <exception>
#include <thread>
#include <vector>

namespace ddpbench::runtime {

void parallel_for(int64_t n, const std::function<void(int64_t i)>& fn) {
  if (n == 1) {
    fn(0);
    return;
  }
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      try {
        fn(i);
      } catch (...) {
        errors[static_cast<size_t>(i)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace ddpbench::runtime
