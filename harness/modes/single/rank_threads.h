// rank_threads.h — the exact reference's SyncBN under autocast (Note [SyncBN under autocast
// judged] below): the K rank chunks of a batch forwarded at once, each in a thread of its own, so
// that each casts the weights for itself (autocast's cache of cast weights is per thread) and
// rounds its own weight gradients, as each DDP rank does, while every BatchNorm layer normalises
// over all of them together: the threads meet at each layer, and the last to arrive computes
// SyncBN's arithmetic (modes/common/global_batch_norm.h) on the chunks in rank order, each rank's
// statistics and backward sums computed on its own rows and combined in rank order, as the ranks
// combine theirs. One autograd graph; backward runs as usual, on the caller's thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "runtime/worker_pool.h"

namespace torch::nn {
class Module;
}
namespace at {
class Tensor;
}
namespace ddpbench::scenarios::models {
class BatchNorm2dImpl;
}

namespace ddpbench::modes::single {

// Note [SyncBN under autocast judged]: under autocast each DDP rank casts the weights to bfloat16
// (float16) for its own chunk, so its weight gradients are rounded per rank before DDP sums them
// in float32; SyncBN meanwhile needs every rank's statistics. Forwarding chunk by chunk gives the
// first and not the second, the whole batch at once the second and not the first; threads that
// meet at every BatchNorm layer give both, with no tolerance widened. SyncBN's backward sums are
// added in rank order for the same reason (Note [SyncBN sums in rank order]).
class RankThreads {
 public:
  // Makes every ddpbench BatchNorm2d of `model` meet its peers when reached in one of run()'s
  // threads; elsewhere (evaluation) it normalises its input alone. `max_ranks` threads at most.
  RankThreads(torch::nn::Module& model, int64_t max_ranks);
  ~RankThreads();
  RankThreads(const RankThreads&) = delete;
  RankThreads& operator=(const RankThreads&) = delete;

  // forward(r) for r in [0, n), each in its own thread under the caller's autocast setting with
  // a cache of casts of its own; returns the outputs in rank order. A failure in one thread
  // releases the others and is rethrown here.
  std::vector<at::Tensor> run(int64_t n, const std::function<at::Tensor(int64_t)>& forward);

 private:
  at::Tensor meet(scenarios::models::BatchNorm2dImpl& bn, const at::Tensor& x);

  runtime::WorkerPool pool_;
  std::mutex mutex_;
  std::condition_variable met_;
  std::unordered_map<std::thread::id, int64_t> rank_of_;  // run()'s threads, this run
  int64_t ranks_ = 0;                                     // this run's meeting size
  std::vector<at::Tensor> inputs_;                        // this layer's chunks, by rank
  std::vector<at::Tensor> outputs_;                       // the last layer's, by rank
  int64_t arrived_ = 0;
  uint64_t layer_ = 0;  // bumped when a layer's meeting completes
  bool failed_ = false;
};

}  // namespace ddpbench::modes::single
