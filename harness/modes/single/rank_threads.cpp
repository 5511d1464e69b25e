// rank_threads.cpp — see rank_threads.h.
#include "modes/single/rank_threads.h"

#include <ATen/autocast_mode.h>
#include <fmt/format.h>
#include <torch/torch.h>

#include <optional>

#include "errors.h"
#include "modes/common/global_batch_norm.h"
#include "scenarios/models/batch_norm.h"
#include "scenarios/optim/autocast_scope.h"
#include "scenarios/optim/torch_version_compat.h"

namespace ddpbench::modes::single {
namespace {

// Autocast's cast cache off while it lives, on this thread (and the process, where 2.x keeps one
// cache): Note [No cast cache across rank threads].
class NoCastCache {
 public:
  NoCastCache() : was_(at::autocast::is_autocast_cache_enabled()) {
    at::autocast::set_autocast_cache_enabled(false);
  }
  ~NoCastCache() { at::autocast::set_autocast_cache_enabled(was_); }
  NoCastCache(const NoCastCache&) = delete;
  NoCastCache& operator=(const NoCastCache&) = delete;

 private:
  bool was_;
};

}  // namespace

RankThreads::RankThreads(torch::nn::Module& model, int64_t max_ranks) : pool_(max_ranks) {
  using scenarios::models::BatchNorm2d;
  using scenarios::models::BatchNorm2dImpl;
  for (const auto& m : model.modules(/*include_self=*/false)) {
    if (auto* bn = m->as<BatchNorm2d>()) {
      bn->set_forward_override(
          [this](BatchNorm2dImpl& self, const torch::Tensor& x) { return meet(self, x); });
    }
  }
}

RankThreads::~RankThreads() = default;

std::vector<at::Tensor> RankThreads::run(int64_t n,
                                         const std::function<at::Tensor(int64_t)>& forward) {
  if (n > pool_.size()) {
    throw WorkerFailure(fmt::format("reference: {} rank chunks for {} threads", n, pool_.size()));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    rank_of_.clear();
    ranks_ = n;
    inputs_.assign(static_cast<size_t>(n), at::Tensor());
    arrived_ = 0;
    failed_ = false;
  }
  // Autocast is a per-thread setting: each thread enters the caller's.
  const c10::DeviceType type = scenarios::compat::autocast_enabled(c10::DeviceType::CUDA)
                                   ? c10::DeviceType::CUDA
                                   : c10::DeviceType::CPU;
  const bool autocast = scenarios::compat::autocast_enabled(type);
  const at::ScalarType dtype = scenarios::compat::autocast_dtype(type);
  // Note [No cast cache across rank threads]: autocast's cache of cast weights is per thread in
  // 1.13 but one per process in 2.x, where the threads would share one cast of each weight and
  // its gradient would be summed over the chunks in bfloat16 before reaching float32 (measured on
  // 2.11: fc.bias 2.7e-3 apart at step 0). With the cache off, every use of a weight casts it
  // afresh: each chunk's own cast, as each rank's, for a model that uses each weight once in a
  // forward (ddpbench's SyncBN models; a TorchScript model, which might reuse one, takes no
  // --sync-bn).
  const NoCastCache no_cache;
  std::vector<at::Tensor> outputs(static_cast<size_t>(n));
  pool_.run([&](int64_t r) {
    if (r >= n) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      rank_of_[std::this_thread::get_id()] = r;
    }
    try {
      at::autocast::set_autocast_cache_enabled(
          false);  // in this thread too, where it is per thread
      std::optional<scenarios::AutocastScope> scope;
      if (autocast) scope.emplace(type, dtype);
      outputs[static_cast<size_t>(r)] = forward(r);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      failed_ = true;
      met_.notify_all();
      throw;
    }
  });
  std::lock_guard<std::mutex> lock(mutex_);
  rank_of_.clear();
  return outputs;
}

at::Tensor RankThreads::meet(scenarios::models::BatchNorm2dImpl& bn, const at::Tensor& x) {
  std::unique_lock<std::mutex> lock(mutex_);
  const auto me = rank_of_.find(std::this_thread::get_id());
  if (me == rank_of_.end() || !bn.is_training()) {
    lock.unlock();
    return global_batch_norm_forward(bn, x, nullptr);
  }
  const auto rank = static_cast<size_t>(me->second);
  inputs_[rank] = x;
  const uint64_t layer = layer_;
  if (++arrived_ == ranks_) {
    // The last to arrive normalises every chunk, in rank order, as one batch of ranks_ ranks.
    try {
      std::vector<int64_t> sizes;
      for (const at::Tensor& in : inputs_) sizes.push_back(in.size(0));
      const at::Tensor y = global_batch_norm_forward(bn, at::cat(inputs_), nullptr, sizes);
      outputs_.clear();
      int64_t begin = 0;
      for (const int64_t n : sizes) {
        outputs_.push_back(y.narrow(0, begin, n));
        begin += n;
      }
    } catch (...) {
      failed_ = true;
      met_.notify_all();
      throw;
    }
    arrived_ = 0;
    inputs_.assign(inputs_.size(), at::Tensor());
    ++layer_;
    met_.notify_all();
  } else {
    met_.wait(lock, [&] { return layer_ != layer || failed_; });
  }
  if (failed_) throw WorkerFailure("reference: another rank chunk's forward failed");
  return outputs_[rank];
}

}  // namespace ddpbench::modes::single
