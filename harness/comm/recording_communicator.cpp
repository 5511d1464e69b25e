// recording_communicator.cpp — see recording_communicator.h.
#include "comm/recording_communicator.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <atomic>
#include <mutex>
#include <optional>
#include <utility>

#include "errors.h"

namespace ddpbench::comm {
namespace {

// The names reports use for dtypes ("float32", not c10's "Float").
std::string dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return "float32";
    case at::kDouble:
      return "float64";
    case at::kHalf:
      return "float16";
    case at::kBFloat16:
      return "bfloat16";
    case at::kLong:
      return "int64";
    case at::kInt:
      return "int32";
    case at::kByte:
      return "uint8";
    case at::kBool:
      return "bool";
    default:
      return c10::toString(t);
  }
}

int64_t total_elements(const std::vector<at::Tensor>& tensors) {
  int64_t n = 0;
  for (const at::Tensor& t : tensors) n += t.numel();
  return n;
}

class RecordedWork : public Work {
 public:
  RecordedWork(std::shared_ptr<Work> inner, std::shared_ptr<FlightRecorder> recorder, int64_t seq)
      : inner_(std::move(inner)), recorder_(std::move(recorder)), seq_(seq) {}
  void wait() override {
    recorder_->waiting(seq_);
    try {
      inner_->wait();
    } catch (...) {
      recorder_->failed(seq_);
      throw;
    }
    recorder_->done(seq_);
  }

 private:
  std::shared_ptr<Work> inner_;
  std::shared_ptr<FlightRecorder> recorder_;
  int64_t seq_;
};

// The counts of a rank's world communicator and of every group split off it, shared.
struct CountsCell {
  mutable std::mutex mutex;
  CollectiveCounts counts;
};

class RecordingCommunicator : public Communicator {
 public:
  RecordingCommunicator(std::unique_ptr<Communicator> inner,
                        std::shared_ptr<FlightRecorder> recorder, const RecordingOptions& options,
                        std::shared_ptr<CountsCell> counts)
      : inner_(std::move(inner)),
        recorder_(std::move(recorder)),
        options_(options),
        counts_(std::move(counts)) {}

  int rank() const override { return inner_->rank(); }
  int world_size() const override { return inner_->world_size(); }
  std::string backend() const override { return inner_->backend(); }
  Communicator& underlying() override { return inner_->underlying(); }

  std::shared_ptr<Work> allreduce_sum(at::Tensor tensor) override {
    const CollectiveFault fault = fault_now();
    if (fault == CollectiveFault::kSkip) return std::make_shared<CompletedWork>();  // nothing sent
    if (fault == CollectiveFault::kShorten && tensor.numel() > 1 && tensor.is_contiguous()) {
      tensor = tensor.view(-1).narrow(0, 0, tensor.numel() - 1);
    }
    const int64_t seq = start(FlightOp::kAllreduce, tensor.scalar_type(), tensor.numel());
    return recorded(seq, issued(seq, [&] { return inner_->allreduce_sum(std::move(tensor)); }));
  }

  void broadcast(std::vector<at::Tensor> tensors, int root) override {
    const at::ScalarType dtype = tensors.empty() ? at::kFloat : tensors.front().scalar_type();
    const int64_t seq = start(FlightOp::kBroadcast, dtype, total_elements(tensors), root);
    blocking(seq, [&] { inner_->broadcast(std::move(tensors), root); });
  }

  std::vector<at::Tensor> allgather(const at::Tensor& tensor) override {
    const int64_t seq = start(FlightOp::kAllgather, tensor.scalar_type(), tensor.numel());
    std::vector<at::Tensor> out;
    blocking(seq, [&] { out = inner_->allgather(tensor); });
    return out;
  }

  GatherWork allgather_async(at::Tensor tensor) override {
    const int64_t seq = start(FlightOp::kAllgather, tensor.scalar_type(), tensor.numel());
    GatherWork inner = issued(seq, [&] { return inner_->allgather_async(std::move(tensor)); });
    return {recorded(seq, std::move(inner.work)), std::move(inner.blocks)};
  }

  at::Tensor reduce_scatter_sum(const at::Tensor& given) override {
    at::Tensor input = given;
    if (std::optional<at::Tensor> skipped = scatter_fault(input)) return *skipped;
    const int64_t seq = start(FlightOp::kReduceScatter, input.scalar_type(), input.numel());
    at::Tensor out;
    blocking(seq, [&] { out = inner_->reduce_scatter_sum(input); });
    return out;
  }

  ScatterWork reduce_scatter_sum_async(at::Tensor input) override {
    if (std::optional<at::Tensor> skipped = scatter_fault(input)) {
      return {std::make_shared<CompletedWork>(), *skipped};
    }
    const int64_t seq = start(FlightOp::kReduceScatter, input.scalar_type(), input.numel());
    ScatterWork inner =
        issued(seq, [&] { return inner_->reduce_scatter_sum_async(std::move(input)); });
    return {recorded(seq, std::move(inner.work)), std::move(inner.block)};
  }

  void barrier() override {
    const int64_t seq = start(FlightOp::kBarrier, at::kFloat, 0);
    blocking(seq, [&] { inner_->barrier(); });
  }

  int64_t collectives_issued() const override { return inner_->collectives_issued() - checks_; }

  CollectiveCounts collective_counts() const override {
    const std::lock_guard<std::mutex> lock(counts_->mutex);
    return counts_->counts;
  }

  void count_issued_past(FlightOp op, int64_t collectives, int64_t bytes) override {
    const std::lock_guard<std::mutex> lock(counts_->mutex);
    for (int64_t i = 0; i < collectives; ++i) {
      // The bytes spread over the collectives, the remainder on the first.
      counts_->counts.add(op, bytes / collectives + (i == 0 ? bytes % collectives : 0));
    }
  }

  std::unique_ptr<Communicator> split(int color) override {
    if (!options_.splitter) return Communicator::split(color);
    // Every rank's color, so that each knows its group's size and its rank in it.
    const std::vector<at::Tensor> all = allgather(at::tensor({int64_t{color}}, at::kLong));
    std::vector<int64_t> colors;
    for (const at::Tensor& c : all) colors.push_back(c.item<int64_t>());
    const SplitGroup group = split_group(colors, rank(), splits_++);
    RecordingOptions sub;
    sub.verify_fingerprints = options_.verify_fingerprints;
    return std::make_unique<RecordingCommunicator>(options_.splitter(group), recorder_, sub,
                                                   counts_);
  }

 private:
  // The fault this reduction carries: the first allreduce or reduce-scatter issued at or after
  // the fault's step.
  CollectiveFault fault_now() {
    if (options_.fault == CollectiveFault::kNone || fired_) return CollectiveFault::kNone;
    if (recorder_->current_step() < options_.fault_step) return CollectiveFault::kNone;
    fired_ = true;
    return options_.fault;
  }

  // The collective fault on a reduce-scatter: skip returns this rank's own block, unsummed, and
  // sends nothing; shorten drops the input's last `world` elements (still world equal blocks).
  std::optional<at::Tensor> scatter_fault(at::Tensor& input) {
    const CollectiveFault fault = fault_now();
    const int64_t world = inner_->world_size();
    if (fault == CollectiveFault::kSkip && input.numel() % world == 0) {
      return input.reshape(-1).chunk(world)[inner_->rank()].clone();
    }
    if (fault == CollectiveFault::kShorten && input.numel() > world && input.is_contiguous()) {
      input = input.view(-1).narrow(0, 0, input.numel() - world);
    }
    return std::nullopt;
  }

  // Records the collective and, under --debug-collectives, proves every rank issues the same one.
  int64_t start(FlightOp op, at::ScalarType dtype, int64_t count, int root = -1) {
    const int64_t seq = recorder_->issue(op, dtype_name(dtype), count, root);
    {
      const std::lock_guard<std::mutex> lock(counts_->mutex);
      counts_->counts.add(op, count * static_cast<int64_t>(c10::elementSize(dtype)));
    }
    if (options_.verify_fingerprints) verify(seq, op, dtype, count, root);
    return seq;
  }

  // An asynchronous collective `seq` started by `call`, recorded as failed if starting it throws.
  template <class Call>
  auto issued(int64_t seq, Call&& call) -> decltype(call()) {
    try {
      return call();
    } catch (...) {
      recorder_->failed(seq);
      throw;
    }
  }
  // Its Work, recorded as waited on and done.
  std::shared_ptr<Work> recorded(int64_t seq, std::shared_ptr<Work> work) const {
    return std::make_shared<RecordedWork>(std::move(work), recorder_, seq);
  }

  template <class Call>
  void blocking(int64_t seq, Call&& call) {
    recorder_->waiting(seq);
    try {
      call();
    } catch (...) {
      recorder_->failed(seq);
      throw;
    }
    recorder_->done(seq);
  }

  // Note [Fingerprints before collectives].
  void verify(int64_t seq, FlightOp op, at::ScalarType dtype, int64_t count, int root) {
    const int64_t step = recorder_->current_step();
    const at::Tensor mine =
        at::tensor(std::vector<int64_t>{static_cast<int64_t>(op), seq, step, count, root,
                                        static_cast<int64_t>(dtype)},
                   at::kLong);
    const std::vector<at::Tensor> all = inner_->allgather(mine);
    ++checks_;
    std::vector<std::pair<int, FlightEntry>> by_rank;
    bool differ = false;
    for (size_t r = 0; r < all.size(); ++r) {
      const at::Tensor t = all[r].contiguous();
      const int64_t* v = t.data_ptr<int64_t>();
      FlightEntry e;
      e.op = static_cast<FlightOp>(v[0]);
      e.seq = v[1];
      e.step = v[2];
      e.count = v[3];
      e.root = static_cast<int32_t>(v[4]);
      const std::string name = dtype_name(static_cast<at::ScalarType>(v[5]));
      name.copy(e.dtype, sizeof e.dtype - 1);
      if (!by_rank.empty() &&
          (!same_fingerprint(by_rank.front().second, e) || by_rank.front().second.seq != e.seq)) {
        differ = true;
      }
      by_rank.emplace_back(static_cast<int>(r), e);
    }
    if (!differ) return;
    recorder_->failed(seq);
    throw WorkerFailure(fmt::format(
        "rank {}: the ranks' collective #{} differs (--debug-collectives stopped it before any "
        "rank reduced it): {}",
        inner_->rank(), seq, describe_disagreement(by_rank)));
  }

  std::unique_ptr<Communicator> inner_;
  std::shared_ptr<FlightRecorder> recorder_;
  RecordingOptions options_;
  std::atomic<bool> fired_{false};
  std::atomic<int64_t> checks_{0};
  int64_t splits_ = 0;  // split() calls so far: the next split's number
  std::shared_ptr<CountsCell> counts_;
};

}  // namespace

std::unique_ptr<Communicator> make_recording_communicator(std::unique_ptr<Communicator> backend,
                                                          std::shared_ptr<FlightRecorder> recorder,
                                                          const RecordingOptions& options) {
  return std::make_unique<RecordingCommunicator>(std::move(backend), std::move(recorder), options,
                                                 std::make_shared<CountsCell>());
}

}  // namespace ddpbench::comm
