// gloo_communicator.cpp — see gloo_communicator.h.
#include "comm/gloo_communicator.h"

#include <torch/version.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "comm/backend_support.h"
#include "comm/c10d_process_group.h"
#include "comm/gloo_reduce_scatter.h"
#include "comm/reduce_scatter_blocks.h"
#include "comm/store_impl.h"

namespace ddpbench::comm {
namespace {

#if TORCH_VERSION_MAJOR >= 2
// PyTorch 2.x keeps one flight recorder per process that records every gloo and NCCL collective,
// and 2.11 adds each group's status to its map before taking its lock. Ranks that run as threads
// of one process (the contract suite, thread_world.h) raced there: SIGSEGV in
// FlightRecorder::recordWithResetEnabled under ProcessGroupGloo::enqueue, 1 run in ~30 under load
// (CI, 2026-11-27). ddpbench never dumps those traces, so the recorder is off before any group
// exists: the variable is read once, when the first group builds the recorder. This runs before
// main, while the process has one thread (setenv is not thread-safe); a user's own setting is kept.
__attribute__((constructor)) void flight_recorder_off_before_any_group() {
  setenv("TORCH_FR_BUFFER_SIZE", "0", /*overwrite=*/0);
}
#endif

class GlooWork : public Work {
 public:
  explicit GlooWork(c10::intrusive_ptr<c10d::Work> work) : work_(std::move(work)) {}
  void wait() override { work_->wait(); }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
};

class GlooCommunicator : public Communicator {
 public:
  GlooCommunicator(const std::shared_ptr<Store>& store, const GlooOptions& o)
      : store_(store), rank_(o.rank), world_size_(o.world_size) {
    auto opts = c10d::ProcessGroupGloo::Options::create(o.timeout);
    opts->devices.push_back(
        o.interface_address.empty()
            ? c10d::ProcessGroupGloo::createDefaultDevice()
            : c10d::ProcessGroupGloo::createDeviceForHostname(o.interface_address));
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>("gloo", store->impl().store);
    pg_ = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, o.rank, o.world_size, opts);
    // Every collective on the group advances its sequence number, also those of c10d's Reducer
    // (c10d_process_group.h), so it is what collectives_issued() counts.
    pg_->setSequenceNumberForGroup();
    first_sequence_number_ = pg_->getSequenceNumberForGroup();
#if TORCH_VERSION_MAJOR >= 2
    group_ = c10::make_intrusive<c10d::ProcessGroup>(prefixed, o.rank, o.world_size);
    for (const auto device : {c10::DeviceType::CPU, c10::DeviceType::CUDA}) {
      group_->setBackend(device, c10d::ProcessGroup::BackendType::GLOO, pg_);
    }
    group_->setDefaultBackend(c10d::ProcessGroup::BackendType::GLOO);
#else
    group_ = pg_;  // 1.13: ProcessGroupGloo is the ProcessGroup
#endif
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  std::string backend() const override { return backend_name(Backend::kGloo); }

  std::shared_ptr<Work> allreduce_sum(at::Tensor tensor) override {
    std::vector<at::Tensor> v{std::move(tensor)};
    return std::make_shared<GlooWork>(pg_->allreduce(v));
  }

  void broadcast(std::vector<at::Tensor> tensors, int root) override {
    for (auto& t : tensors) {
      std::vector<at::Tensor> v{t};
      c10d::BroadcastOptions opts;
      opts.rootRank = root;
      pg_->broadcast(v, opts)->wait();
    }
  }

  std::vector<at::Tensor> allgather(const at::Tensor& tensor) override {
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < world_size_; ++r) out[0].push_back(at::empty_like(tensor));
    std::vector<at::Tensor> in{tensor};
    pg_->allgather(out, in)->wait();
    return out[0];
  }
  GatherWork allgather_async(at::Tensor tensor) override {
    if (!tensor.is_contiguous()) return Communicator::allgather_async(std::move(tensor));
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < world_size_; ++r) out[0].push_back(at::empty_like(tensor));
    std::vector<at::Tensor> in{std::move(tensor)};
    auto work = std::make_shared<GlooWork>(pg_->allgather(out, in));
    return {std::move(work), std::move(out[0])};
  }

  // ProcessGroupGloo (libtorch 1.13) has no reduce_scatter: gloo's sends and receives make one
  // (gloo_reduce_scatter.h), with a reduce-scatter's traffic, half an allreduce's. The blocking
  // form leaves its input (the caller's) as it was and sums into a tensor of its own; the
  // asynchronous one sums in place.
  at::Tensor reduce_scatter_sum(const at::Tensor& input) override {
    reduce_scatter_block(input, world_size_, "gloo");
    ScatterWork work = start_reduce_scatter(input.contiguous(), /*in_place=*/false);
    work.work->wait();
    return work.block;
  }
  ScatterWork reduce_scatter_sum_async(at::Tensor input) override {
    reduce_scatter_block(input, world_size_, "gloo");
    if (!input.is_contiguous()) return Communicator::reduce_scatter_sum_async(std::move(input));
    return start_reduce_scatter(input, /*in_place=*/true);
  }

  void barrier() override { pg_->barrier()->wait(); }

  int64_t collectives_issued() const override {
    // The reduce-scatters built from sends and receives count once each, their sends and
    // receives not at all.
    return static_cast<int64_t>(pg_->getSequenceNumberForGroup() - first_sequence_number_ -
                                point_to_point_sequence_) +
           point_to_point_collectives_;
  }

  const c10::intrusive_ptr<c10d::ProcessGroup>& group() const { return group_; }

 private:
  ScatterWork start_reduce_scatter(const at::Tensor& input, bool in_place) {
    ++point_to_point_collectives_;
    // Every rank issues its reduce-scatters in the same order, so the count is the same tag on
    // every rank; gloo matches sends to receives by it. Wrapped well before int's end.
    const int tag = static_cast<int>(point_to_point_collectives_ % (1 << 30));
    // 2.11's sends and receives advance the group's sequence number, 1.13's do not: what they
    // advanced it by is taken off, so that a reduce-scatter counts as one collective on both.
    const uint64_t before = pg_->getSequenceNumberForGroup();
    ScatterWork work = gloo_reduce_scatter_async(*pg_, rank_, world_size_, input, tag, in_place);
    point_to_point_sequence_ += pg_->getSequenceNumberForGroup() - before;
    return work;
  }

  std::shared_ptr<Store> store_;
  int rank_;
  int world_size_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg_;
  c10::intrusive_ptr<c10d::ProcessGroup> group_;
  uint64_t first_sequence_number_ = 0;
  int64_t point_to_point_collectives_ = 0;  // reduce-scatters (gloo_reduce_scatter.h)
  uint64_t point_to_point_sequence_ = 0;    // what their sends and receives advanced the group by
};

}  // namespace

c10::intrusive_ptr<c10d::ProcessGroup> c10d_process_group(Communicator& comm) {
  auto* gloo = dynamic_cast<GlooCommunicator*>(&comm.underlying());
  return gloo != nullptr ? gloo->group() : c10::intrusive_ptr<c10d::ProcessGroup>();
}

std::unique_ptr<Communicator> make_gloo_communicator(const std::shared_ptr<Store>& store,
                                                     const GlooOptions& options) {
  return std::make_unique<GlooCommunicator>(store, options);
}

}  // namespace ddpbench::comm
