// shm_communicator.cpp — see shm_communicator.h.
#include "comm/shm_communicator.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/backend_support.h"
#include "comm/gloo_communicator.h"
#include "comm/reduce_scatter_blocks.h"
#include "comm/shm_names.h"
#include "comm/shm_segment.h"
#include "errors.h"

namespace ddpbench::comm {
namespace {

// One cache line per counter: ranks write their own counters while others poll them.
struct alignas(64) Counter {
  std::atomic<uint32_t> value{0};
};

// The head of every rank's segment: how far this rank has got, per chunk sequence number.
struct Control {
  Counter arrived;  // its chunk is copied into its area
  Counter reduced;  // its slice of the chunk is summed
  Counter done;     // it has copied every slice out: its areas may be overwritten
};
constexpr size_t kControlBytes = 4096;
static_assert(sizeof(Control) <= kControlBytes);

// Elements summed per block: small enough for the stack and L1, large enough to vectorise.
constexpr int64_t kBlock = 1024;

// Writes the sum to two places at once: the caller's tensor and the area its peers copy from.
template <typename T, typename Acc>
void sum_slices(const std::vector<const std::byte*>& sources, std::byte* dst, std::byte* dst2,
                int64_t count) {
  std::array<Acc, kBlock> acc;
  for (int64_t start = 0; start < count; start += kBlock) {
    const int64_t n = std::min(kBlock, count - start);
    const auto* s0 = reinterpret_cast<const T*>(sources[0]) + start;
    for (int64_t i = 0; i < n; ++i) acc[static_cast<size_t>(i)] = static_cast<Acc>(s0[i]);
    for (size_t q = 1; q < sources.size(); ++q) {
      const auto* s = reinterpret_cast<const T*>(sources[q]) + start;
      for (int64_t i = 0; i < n; ++i) acc[static_cast<size_t>(i)] += static_cast<Acc>(s[i]);
    }
    // Written only after every source is read: a destination is one of them.
    auto* d = reinterpret_cast<T*>(dst) + start;
    auto* d2 = reinterpret_cast<T*>(dst2) + start;
    for (int64_t i = 0; i < n; ++i) d[i] = d2[i] = static_cast<T>(acc[static_cast<size_t>(i)]);
  }
}

// float16 and bfloat16 are summed in float32 and rounded once.
void sum_slices(at::ScalarType dtype, const std::vector<const std::byte*>& sources, std::byte* dst,
                std::byte* dst2, int64_t count) {
  switch (dtype) {
    case at::kFloat:
      return sum_slices<float, float>(sources, dst, dst2, count);
    case at::kDouble:
      return sum_slices<double, double>(sources, dst, dst2, count);
    case at::kLong:
      return sum_slices<int64_t, int64_t>(sources, dst, dst2, count);
    case at::kHalf:
      return sum_slices<at::Half, float>(sources, dst, dst2, count);
    case at::kBFloat16:
      return sum_slices<at::BFloat16, float>(sources, dst, dst2, count);
    default:
      throw std::logic_error("shm: sum of an unsupported dtype reached the kernel");
  }
}

std::string read_first_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Two processes share memory only on one kernel: same host name is not enough (containers),
// the boot id names the running kernel.
std::string host_identity() {
  std::array<char, 256> host{};
  gethostname(host.data(), host.size() - 1);
  return fmt::format("{} (boot {})", host.data(),
                     read_first_line("/proc/sys/kernel/random/boot_id"));
}

at::Tensor movable_by_gloo(const at::Tensor& t) {
  return t.scalar_type() == at::kBFloat16 ? t.view(at::kHalf) : t;
}

class ShmWork : public Work {
 public:
  explicit ShmWork(std::shared_future<void> done) : done_(std::move(done)) {}
  void wait() override { done_.get(); }  // rethrows the collective's error

 private:
  std::shared_future<void> done_;
};

class ShmCommunicator : public Communicator {
 public:
  ShmCommunicator(const std::shared_ptr<Store>& store, const ShmOptions& o)
      : options_(o),
        inner_(
            make_gloo_communicator(store, {o.rank, o.world_size, o.interface_address, o.timeout})) {
    if (options_.chunk_bytes < 64) throw std::invalid_argument("shm: chunk_bytes below 64");
    map_segments(*store);
    worker_ = std::thread([this] { serve(); });
  }

  ~ShmCommunicator() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cancelled_ = true;  // a collective waiting for a peer gives up within 100 ms
    wake_.notify_all();
    worker_.join();
  }

  int rank() const override { return options_.rank; }
  int world_size() const override { return options_.world_size; }
  std::string backend() const override { return backend_name(Backend::kShm); }

  std::shared_ptr<Work> allreduce_sum(at::Tensor tensor) override {
    if (!supports_sum(Backend::kShm, tensor.scalar_type())) {
      throw std::invalid_argument(
          fmt::format("shm allreduce: no sum for dtype {}", c10::toString(tensor.scalar_type())));
    }
    if (!tensor.device().is_cpu()) {
      throw std::invalid_argument("shm allreduce: a device tensor reached the host-only kernel");
    }
    ++issued_;
    auto job = std::make_shared<std::packaged_task<void()>>(
        [this, tensor = std::move(tensor)]() mutable { allreduce_now(tensor); });
    std::shared_future<void> done = job->get_future().share();
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back([job] { (*job)(); });
    }
    wake_.notify_one();
    return std::make_shared<ShmWork>(std::move(done));
  }

  // Broadcast and allgather only move bytes: a dtype gloo cannot move (bfloat16) travels as
  // float16 of the same bits (gloo 1.13 moves no int16 either).
  void broadcast(std::vector<at::Tensor> tensors, int root) override {
    for (auto& t : tensors) t = movable_by_gloo(t);
    inner_->broadcast(std::move(tensors), root);
  }
  std::vector<at::Tensor> allgather(const at::Tensor& tensor) override {
    std::vector<at::Tensor> out = inner_->allgather(movable_by_gloo(tensor));
    for (auto& t : out) t = t.view(tensor.scalar_type());
    return out;
  }
  // No reduce-scatter of its own (backend_support.cpp says so where it is reported).
  at::Tensor reduce_scatter_sum(const at::Tensor& input) override {
    return reduce_scatter_by_allreduce(*this, input, "shm");
  }
  void barrier() override { inner_->barrier(); }
  int64_t collectives_issued() const override { return issued_ + inner_->collectives_issued(); }

 private:
  size_t segment_bytes() const { return kControlBytes + 2 * options_.chunk_bytes; }
  Control& control(int rank) const {
    return *reinterpret_cast<Control*>(segments_[static_cast<size_t>(rank)].data());
  }
  std::byte* area(int rank, uint32_t seq) const {
    return segments_[static_cast<size_t>(rank)].data() + kControlBytes +
           (seq % 2) * options_.chunk_bytes;
  }

  // Rendezvous through the store: one generation per communicator (a store may serve several in
  // turn), a same-host check, then every rank maps every segment and unlinks its own. The names
  // come from the run's prefix (comm/shm_names.h): the launching parent's, which it removes
  // whatever ends the run, or under another launcher one rank 0 makes.
  void map_segments(Store& store) {
    const int n = options_.world_size;
    const int r = options_.rank;
    const int64_t generation = (store.add("shm/joined", 1) - 1) / n;
    const auto key = [&](const std::string& what) {
      return fmt::format("shm/{}/{}", generation, what);
    };
    std::string prefix = options_.segment_prefix;
    if (prefix.empty()) {
      if (r == 0) store.set(key("prefix"), new_shm_run_prefix(getpid()));
      prefix = store.get(key("prefix"));
    }
    const std::string here = host_identity();
    store.set(key(fmt::format("host/{}", r)), here);
    for (int q = 0; q < n; ++q) {
      const std::string there = store.get(key(fmt::format("host/{}", q)));
      if (there != here) {
        throw InputError(fmt::format(
            "--backend shm needs every rank on one host, but rank {} runs on {} and rank {} on "
            "{}; use --backend gloo (or mpi) across hosts",
            r, here, q, there));
      }
    }
    const auto name = [&](int q) { return shm_segment_name(prefix, generation, q); };
    SharedSegment own = SharedSegment::create(name(r), segment_bytes());
    new (own.data()) Control();
    // Test hook: a set-up that never ends, with every segment still named (the window a rank
    // killed or stopped during set-up leaves them in; leftovers_e2e_test.cpp).
    while (std::getenv("DDPBENCH_TEST_SHM_STALL_IN_SETUP") != nullptr) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    store.set(key(fmt::format("created/{}", r)), "1");
    for (int q = 0; q < n; ++q) {
      if (q == r) {
        segments_.push_back(std::move(own));
        continue;
      }
      store.get(key(fmt::format("created/{}", q)));
      segments_.push_back(SharedSegment::open(name(q), segment_bytes()));
    }
    store.set(key(fmt::format("mapped/{}", r)), "1");
    for (int q = 0; q < n; ++q) store.get(key(fmt::format("mapped/{}", q)));
    segments_[static_cast<size_t>(r)].unlink();
  }

  void wait_all(Counter Control::*which, uint32_t seq, const char* phase) {
    const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
    for (int q = 0; q < options_.world_size; ++q) {
      if (!wait_at_least((control(q).*which).value, seq, deadline, cancelled_)) {
        throw std::runtime_error(fmt::format(
            "shm allreduce: rank {} did not {} within {:.0f} s (rank {} waited)", q, phase,
            std::chrono::duration<double>(options_.timeout).count(), options_.rank));
      }
    }
  }

  void allreduce_now(at::Tensor& tensor) {
    at::Tensor t = tensor.contiguous();
    const int n = options_.world_size;
    const int r = options_.rank;
    const auto elem = static_cast<int64_t>(t.element_size());
    const int64_t chunk_elems = static_cast<int64_t>(options_.chunk_bytes) / elem;
    auto* data = static_cast<std::byte*>(t.data_ptr());
    const auto slice_begin = [&](int q, int64_t m) { return m * q / n; };
    Control& mine = control(r);
    for (int64_t off = 0; off < t.numel(); off += chunk_elems) {
      const int64_t m = std::min(chunk_elems, t.numel() - off);
      const uint32_t seq = ++seq_;
      // This area last held chunk seq-2: every rank must have copied its slices out of it.
      if (seq > 2) wait_all(&Control::done, seq - 2, "finish reading the previous chunk");
      // Peers need every slice but this rank's own, which it sums straight from its tensor.
      const int64_t lo = slice_begin(r, m);
      const int64_t hi = slice_begin(r + 1, m);
      std::memcpy(area(r, seq), data + off * elem, static_cast<size_t>(lo * elem));
      std::memcpy(area(r, seq) + hi * elem, data + (off + hi) * elem,
                  static_cast<size_t>((m - hi) * elem));
      publish(mine.arrived.value, seq);

      wait_all(&Control::arrived, seq, "contribute its chunk");
      std::vector<const std::byte*> sources;
      for (int q = 0; q < n; ++q) {
        sources.push_back(q == r ? data + (off + lo) * elem : area(q, seq) + lo * elem);
      }
      sum_slices(t.scalar_type(), sources, data + (off + lo) * elem, area(r, seq) + lo * elem,
                 hi - lo);
      publish(mine.reduced.value, seq);

      wait_all(&Control::reduced, seq, "sum its slice");
      for (int q = 0; q < n; ++q) {
        if (q == r) continue;  // summed in place above
        const int64_t qlo = slice_begin(q, m);
        const int64_t qhi = slice_begin(q + 1, m);
        std::memcpy(data + (off + qlo) * elem, area(q, seq) + qlo * elem,
                    static_cast<size_t>((qhi - qlo) * elem));
      }
      publish(mine.done.value, seq);
    }
    if (!t.is_same(tensor)) tensor.copy_(t);
  }

  // The background thread: allreduces in launch order.
  void serve() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();  // a packaged_task: an exception goes to the waiting caller
    }
  }

  ShmOptions options_;
  std::unique_ptr<Communicator> inner_;
  std::vector<SharedSegment> segments_;  // index = rank
  uint32_t seq_ = 0;                     // chunks so far (the worker's)
  std::atomic<int64_t> issued_{0};
  std::atomic<bool> cancelled_{false};
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace

std::unique_ptr<Communicator> make_shm_communicator(const std::shared_ptr<Store>& store,
                                                    const ShmOptions& options) {
  return std::make_unique<ShmCommunicator>(store, options);
}

}  // namespace ddpbench::comm
